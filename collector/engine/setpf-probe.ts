// Whether this tmux expands `set-option -F` formats, which the guarded writes depend on. Probed
// once per server and cached there in @tma_setpf_ok, so later processes only read the answer.

import { probeSupported, renderProbeRead, renderProbeUnset, renderSetpfProbe } from '../core/stamp-render.js';
import { KEY } from '../core/store-codec.js';
import { runUnlessFailed } from '../tmux/batch.js';
import { TmuxError } from '../tmux/errors.js';
import type { TmuxRunner } from '../tmux/runner-types.js';
import { storedSetpf, type ServerFacts } from './server-facts.js';

/** The unguarded-writes warning is printed at most once per process, however many servers. */
let warnedUnguarded = false;

export class SetpfProbe {
  private guarded: boolean | null = null;

  constructor(
    private readonly runner: TmuxRunner,
    private readonly server: ServerFacts,
    private readonly warn: (line: string) => void,
  ) {}

  /** The probe's answer, probing with `pane` if none is known. A failed probe assumes guarded, uncached. */
  async supported(pane: string): Promise<boolean> {
    if (this.guarded !== null) return this.guarded;
    let ok: boolean;
    try {
      // The server's facts carry the cached answer when it is stored (no tmux call of its own).
      const stored = this.server.peek()?.setpfOk ?? storedSetpf(await this.runner.run(['show-options', '-sqv', KEY.setpfOk]));
      if (stored !== null) ok = stored;
      else {
        const outs = await this.runner.runChain([renderSetpfProbe(pane), renderProbeRead(pane), renderProbeUnset(pane)]);
        ok = probeSupported(outs[1] ?? '');
        // The answer stands even if caching it fails; the next process just probes again.
        await runUnlessFailed(this.runner, ['set-option', '-s', KEY.setpfOk, ok ? '1' : '0']);
      }
    } catch (e) {
      if (e instanceof TmuxError && e.kind === 'server-gone') throw e;
      return true;
    }
    // Every process that degrades says so once, whether it probed or found the cached answer:
    // the process that probed first is often a status line whose stderr nobody reads.
    if (!ok && !warnedUnguarded) {
      warnedUnguarded = true;
      this.warn('tma: this tmux stores set-option -F formats literally; writes are unguarded\n');
    }
    return (this.guarded = ok);
  }
}
