// The hook path: an agent's own event, stamped straight into its pane under evidence-time
// arbitration. It never runs the fold; it writes a claim the next cycle will respect.

import { summaryOf } from '../core/rollup.js';
import { pendingUpdate, type PendingUpdate } from '../core/pending-hook.js';
import {
  decideEvent,
  eventSentAt,
  eventSession,
  mapEvent,
  permissionRequestUpdate,
  registerExtras,
  type EventDecision,
  type NotifyConfig,
  type NotifyTrigger,
} from '../core/hook-event.js';
import { chain, renderHookCompanion, renderPublish, renderRemove, renderRollups } from '../core/stamp-render.js';
import { decodeStamp, KEY } from '../core/store-codec.js';
import type { AgentManifest, Guard, PublishPlan, StampedState, State } from '../core/types.js';
import type { TmuxRunner } from '../tmux/runner.js';
import { LIST_PANES_FORMAT, parsePaneList, type PaneRecord } from './pane-list.js';

export interface EventInput {
  runner: TmuxRunner;
  manifests: readonly AgentManifest[];
  agent: string;
  kind: string;
  pane: string;
  payload: string;
  now: number;
  /** `[notify] from_event` and `on`; absent: the hook never rings (the collector does). */
  notify?: NotifyConfig;
}

export interface EventOutcome {
  decision: EventDecision['kind'] | 'no-manifest' | 'no-pane';
  /** The argv that was run, for tests and debugging. */
  commands: string[][];
  /** The trigger this event may ring, once the caller has checked the stamp stands. */
  notify: NotifyTrigger | null;
}

function decoded(rec: PaneRecord): StampedState | null {
  const d = decodeStamp(rec.options);
  return d.ok ? d.stamp : null;
}

/** Rollups of the pane's window and session with this pane's state replaced by `next`. */
function rollupsWith(panes: PaneRecord[], target: PaneRecord, next: State | null): [string, string] {
  const win: State[] = [];
  const ses: State[] = [];
  for (const p of panes) {
    const st = p.paneId === target.paneId ? next : (decoded(p)?.state ?? null);
    if (st === null) continue;
    ses.push(st);
    if (p.windowIndex === target.windowIndex) win.push(st);
  }
  return [summaryOf(win), summaryOf(ses)];
}

export async function intakeEvent(input: EventInput): Promise<EventOutcome> {
  const { runner, agent, kind, pane, payload, now } = input;
  const manifest = input.manifests.find((m) => m.name === agent);
  if (!manifest) return { decision: 'no-manifest', commands: [], notify: null };

  // Every pane of the pane's session: the target's tuple plus what the rollups are made of.
  const [listOut, setpf] = await runner.runChain([
    ['list-panes', '-s', '-t', pane, '-F', LIST_PANES_FORMAT],
    ['show-options', '-sqv', KEY.setpfOk],
  ]);
  const panes = parsePaneList(listOut ?? '');
  const rec = panes.find((p) => p.paneId === pane);
  if (!rec) return { decision: 'no-pane', commands: [], notify: null };
  const stored = decoded(rec);
  const session = eventSession(payload);
  const decision = decideEvent({
    mapped: mapEvent(manifest, kind, payload),
    stored,
    eventSession: session,
    now,
    notify: input.notify ?? { fromEvent: false, on: [] },
  });

  const cmds: string[][] = [];
  // Every write of an event holds where a hook event the agent sent after it already stamped (hook
  // processes race): an event that lands late must not undo what a later one wrote, be it the
  // tuple, a request id ("replied" of one prompt after "required" of the next) or a pending call.
  // Ordered by the hook time alone: a screen read that corroborated the previous hook claim moved
  // evidence_at past an event sent before that read landed, and once held the event's pending call.
  const guarded = (setpf ?? '').trim() !== '0';
  const guard: Guard = { kind: 'hook_arbitrate', sentAt: eventSentAt(payload, now) };
  const companion = (key: string, value: string): string[] =>
    guarded ? renderHookCompanion(pane, key, value, guard) : ['set-option', '-p', '-t', pane, key, value];
  // Guarded, an unset is an empty value (read as absent): tmux cannot unset conditionally.
  const clear = (key: string): string[] => (guarded ? companion(key, '') : ['set-option', '-p', '-u', '-t', pane, key]);
  switch (decision.kind) {
    case 'nothing':
    case 'ignore':
      break;
    case 'subagents':
      cmds.push(
        decision.list.length ? ['set-option', '-p', '-t', pane, KEY.subagents, decision.list.join(' ')] : ['set-option', '-p', '-u', '-t', pane, KEY.subagents],
      );
      break;
    case 'remove': {
      const [w, s] = rollupsWith(panes, rec, null);
      cmds.push(...renderRemove(pane), ...renderRollups(pane, w, s));
      break;
    }
    case 'stamp': {
      const plan: PublishPlan = {
        kind: 'publish',
        state: decision.state,
        detail: decision.detail,
        source: 'hook',
        evidenceAt: now,
        since: now,
        stampedAt: now,
        hash: stored?.hash ?? null,
        pid: stored?.pid ?? 0,
        name: agent,
        setAttention: decision.attention,
        episodeReset: false,
        guard,
      };
      cmds.push(...renderPublish(pane, plan, { guarded, prev: stored }));
      // A tmux that cannot expand `-F` would store the conditional itself (a literal turn_at no
      // longer decodes), so there the companions follow the tuple's advisory plain writes.
      if (decision.registerSession !== null) cmds.push(companion(KEY.session, decision.registerSession));
      if (decision.recordTurn) cmds.push(companion(KEY.turnAt, String(now)));
      const [w, s] = rollupsWith(panes, rec, decision.state);
      cmds.push(...renderRollups(pane, w, s, guarded ? guard : undefined));
      break;
    }
  }

  // Values copied from the payload ride after the stamp, and only when it commits.
  if (decision.kind === 'stamp' && decision.register) {
    const extras = registerExtras(payload);
    if (extras.model !== null) cmds.push(['set-option', '-p', '-t', pane, KEY.model, extras.model]);
    if (extras.apiEndpoint !== null) cmds.push(['set-option', '-p', '-t', pane, KEY.apiEndpoint, extras.apiEndpoint]);
  }
  const req = permissionRequestUpdate(kind, decision, payload, stored, rec.options['@agent_permission_request'] ?? null);
  if (req.kind === 'set') cmds.push(companion(KEY.permissionRequest, req.id));
  if (req.kind === 'unset' && rec.options['@agent_permission_request'] !== undefined) cmds.push(clear(KEY.permissionRequest));

  cmds.push(...pendingWrites(rec.options, pendingUpdate(kind, decision.kind === 'stamp' ? decision.state : null, payload), companion, clear));

  if (cmds.length) await runner.run(chain(cmds));
  return { decision: decision.kind, commands: cmds, notify: decision.kind === 'stamp' ? decision.notify : null };
}

const PENDING_KEYS = ['@agent_pending_tool', '@agent_pending_call', '@agent_pending_summary'] as const;

/** The pending-call options a hook event sets or clears; agent-printed text, never logged. */
function pendingWrites(
  options: Partial<Record<string, string>>,
  u: PendingUpdate,
  set: (key: string, value: string) => string[],
  clear: (key: string) => string[],
): string[][] {
  if (u.kind === 'none') return [];
  if (u.kind === 'clear') return PENDING_KEYS.filter((k) => options[k] !== undefined).map(clear);
  const values = [u.tool, u.call, u.summary];
  return PENDING_KEYS.map((k, i) => (values[i] === null ? clear(k) : set(k, values[i]!)));
}
