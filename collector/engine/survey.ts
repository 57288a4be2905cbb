// A read-only look at one server for `doctor`: what every pane is, what its options hold, and what
// is wrong — without capturing or writing anything.

import { identify, isIgnored, type Identity } from '../core/identity.js';
import type { ProcEntry } from '../core/proc.js';
import { decodeStamp, KEY } from '../core/store-codec.js';
import type { AgentManifest, StampedState } from '../core/types.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { LIST_PANES_FORMAT, locatorOf, parsePaneList, type PaneRecord } from './pane-list.js';
import { stampProblem } from './stamp-issues.js';

export interface SurveyedPane {
  rec: PaneRecord;
  locator: string;
  stamp: StampedState | null;
  problem: string | null;
  identity: Identity | null;
  ignored: boolean;
}

export interface Survey {
  tmuxVersion: string | null;
  lastPoll: number | null;
  attachedClients: number;
  statusEnabled: boolean;
  panes: SurveyedPane[];
  walkError: string | null;
}

export async function survey(runner: TmuxRunner, manifests: readonly AgentManifest[], readProcs: () => Promise<ProcEntry[]>): Promise<Survey> {
  const [list, version, lastPoll, clients, status] = await runner.runChain([
    ['list-panes', '-a', '-F', LIST_PANES_FORMAT],
    ['display-message', '-p', '#{version}'],
    ['show-options', '-sqv', KEY.lastPoll],
    ['list-clients', '-F', '#{client_name}'],
    ['show-options', '-gqv', 'status'],
  ]);
  let procs: ProcEntry[] = [];
  let walkError: string | null = null;
  try {
    procs = await readProcs();
  } catch (e) {
    walkError = (e as Error).message;
  }
  const panes = parsePaneList(list ?? '').map((rec): SurveyedPane => {
    const d = decodeStamp(rec.options);
    const stamp = d.ok ? d.stamp : null;
    const ignored = isIgnored(rec.options['@agent_ignore']);
    const registration =
      stamp && rec.options['@agent_name'] && rec.options['@agent_session']
        ? { name: rec.options['@agent_name'], session: rec.options['@agent_session'] }
        : null;
    const identity = ignored
      ? null
      : identify({
          paneCurrentCommand: rec.currentCommand,
          title: rec.title,
          panePid: rec.panePid,
          procs,
          manifests,
          storedAnchorPid: Number(rec.options['@tma_title_match_pid']) || null,
          storedAgentName: rec.options['@agent_name'] ?? null,
          registration,
        });
    return { rec, locator: locatorOf(rec), stamp, problem: stampProblem(rec), identity, ignored };
  });
  return {
    tmuxVersion: (version ?? '').trim() || null,
    lastPoll: Number((lastPoll ?? '').trim()) || null,
    attachedClients: (clients ?? '').split('\n').filter(Boolean).length,
    statusEnabled: (status ?? '').trim() !== 'off',
    panes,
    walkError,
  };
}
