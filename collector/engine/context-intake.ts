// `tma event --kind context`: one telemetry payload (a statusline JSON, a pi context event) into
// the pane's context gauge. Like every hook path it never fails loudly: a payload we cannot read,
// a pane that is gone or one owned by another session simply writes nothing.

import { parseContextEvent, type ContextReport } from '../core/telemetry/context-report.js';
import { chain, renderContextChain } from '../core/stamp-render.js';
import { KEY } from '../core/store-codec.js';
import type { AgentManifest } from '../core/types.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { LIST_PANES_FORMAT, parsePaneList } from './pane-list.js';

export interface ContextIntakeInput {
  runner: TmuxRunner;
  manifests: readonly AgentManifest[];
  agent: string;
  pane: string;
  payload: string;
  now: number;
}

export type ContextIntakeOutcome =
  | { kind: 'no-telemetry' | 'ignored' | 'no-pane' | 'not-owner'; commands: [] }
  | { kind: 'written'; report: ContextReport; commands: string[][] };

/**
 * A payload whose session differs from the pane's registered one comes from someone else's
 * statusline (a subagent's, typically) and must not move this pane's gauge. An empty payload
 * session differs too; a pane nobody registered accepts any.
 */
export function ownsPayload(paneSession: string | undefined, report: ContextReport): boolean {
  if (paneSession === undefined || paneSession === '' || report.session === null) return true;
  return paneSession === report.session;
}

export async function intakeContext(input: ContextIntakeInput): Promise<ContextIntakeOutcome> {
  const { runner, agent, pane, payload, now } = input;
  const format = input.manifests.find((m) => m.name === agent)?.telemetry.context?.format;
  if (format === undefined) return { kind: 'no-telemetry', commands: [] };
  const report = parseContextEvent(format, payload);
  if (report === null) return { kind: 'ignored', commands: [] };

  let listOut: string | undefined;
  let setpf: string | undefined;
  try {
    [listOut, setpf] = await runner.runChain([
      ['list-panes', '-t', pane, '-F', LIST_PANES_FORMAT],
      ['show-options', '-sqv', KEY.setpfOk],
    ]);
  } catch {
    return { kind: 'no-pane', commands: [] };
  }
  const rec = parsePaneList(listOut ?? '').find((p) => p.paneId === pane);
  if (!rec) return { kind: 'no-pane', commands: [] };
  if (!ownsPayload(rec.options['@agent_session'], report)) return { kind: 'not-owner', commands: [] };

  const storedAt = Number(rec.options['@agent_context_at']);
  const cmds = renderContextChain(
    pane,
    { pct: report.pct, tokens: report.tokens, at: now },
    { guarded: (setpf ?? '').trim() !== '0', storedAt: Number.isFinite(storedAt) ? storedAt : 0 },
  );
  if (cmds.length) await runner.run(chain(cmds));
  return { kind: 'written', report, commands: cmds };
}
