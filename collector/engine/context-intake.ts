// `tma event --kind context`: one telemetry payload (a statusline JSON, a pi context event) into
// the pane's context gauge. Like every hook path it never fails loudly: a payload we cannot read,
// a pane that is gone or one owned by another session simply writes nothing.

import { claudeUsage, parseContextEvent, type ContextReport, type UsageReport } from '../core/telemetry/context-report.js';
import { chain, renderContextChain, renderUsageChain } from '../core/stamp-render.js';
import { KEY } from '../core/store-codec.js';
import type { AgentManifest } from '../core/types.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { findString } from '../core/telemetry/scan.js';
import { LIST_PANES_FORMAT, parsePaneList } from './pane-list.js';

const findSession = (payload: string) => findString(payload, 'session_id');

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
  | { kind: 'written'; report: ContextReport | null; usage: UsageReport | null; commands: string[][] };

/**
 * A payload whose session differs from the pane's registered one comes from someone else's
 * statusline (a subagent's, typically) and must not move this pane's gauge. An empty payload
 * session differs too; a pane nobody registered accepts any.
 */
export function ownsPayload(paneSession: string | undefined, report: Pick<ContextReport, 'session'>): boolean {
  if (paneSession === undefined || paneSession === '' || report.session === null) return true;
  return paneSession === report.session;
}

export async function intakeContext(input: ContextIntakeInput): Promise<ContextIntakeOutcome> {
  const { runner, agent, pane, payload, now } = input;
  const format = input.manifests.find((m) => m.name === agent)?.telemetry.context?.format;
  if (format === undefined) return { kind: 'no-telemetry', commands: [] };
  const report = parseContextEvent(format, payload);
  // Only Claude's statusline is known to carry cost and quota.
  const usage = format === 'claude-statusline-json' ? claudeUsage(payload) : null;
  const hasUsage = usage !== null && (usage.costUsd !== null || usage.quota !== null);
  if (report === null && !hasUsage) return { kind: 'ignored', commands: [] };

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
  const session = { session: report?.session ?? findSession(payload) };
  if (!ownsPayload(rec.options['@agent_session'], session)) return { kind: 'not-owner', commands: [] };

  const guarded = (setpf ?? '').trim() !== '0';
  const marker = (v: string | undefined) => (Number.isFinite(Number(v)) ? Number(v) : 0);
  const cmds = report
    ? renderContextChain(pane, { pct: report.pct, tokens: report.tokens, at: now }, { guarded, storedAt: marker(rec.options['@agent_context_at']) })
    : [];
  if (usage && hasUsage) {
    cmds.push(...renderUsageChain(pane, { ...usage, at: now }, { guarded, storedAt: marker(rec.options['@agent_quota_at']) }));
  }
  if (cmds.length) await runner.run(chain(cmds));
  return { kind: 'written', report, usage, commands: cmds };
}
