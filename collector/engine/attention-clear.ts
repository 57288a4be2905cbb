// The ordered-input clear at the end of a cycle: a human client that shows a flagged pane and
// typed after the episode began has seen it, so its attention flag goes. Strictly later second
// only, so input in the same second never clears (seenByClients, settled-read.ts).

import { chain } from '../core/stamp-render.js';
import { KEY } from '../core/store-codec.js';
import { rethrowUnlessFailed, runUnlessFailed } from '../tmux/batch.js';
import type { TmuxRunner } from '../tmux/runner-types.js';
import type { PaneOutcome } from './outcome.js';
import { attentionClearable, LIST_CLIENTS_FORMAT, seenByClients } from './settled-read.js';

/** Unset the seen flags; the outcomes' stamps learn it once the write landed. */
export async function clearSeenAttention(runner: TmuxRunner, outcomes: readonly PaneOutcome[]): Promise<void> {
  const flagged = outcomes.filter((o) => attentionClearable(o.stamp)).map((o) => ({ o, paneId: o.rec.paneId, stamp: o.stamp! }));
  if (!flagged.length) return;
  let out: string;
  try {
    out = await runner.run(['list-clients', '-F', LIST_CLIENTS_FORMAT]);
  } catch (e) {
    rethrowUnlessFailed(e);
    return;
  }
  const clear = seenByClients(flagged, out).map((f) => f.o);
  if (!clear.length) return;
  const ok = await runUnlessFailed(runner, chain(clear.map((o) => ['set-option', '-p', '-u', '-t', o.rec.paneId, KEY.attention])));
  if (ok) for (const o of clear) o.stamp = { ...o.stamp!, attention: false };
}
