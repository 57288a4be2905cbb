// One agent start carried through every phase a person sees: idle → prompt typed → working →
// permission prompt painted → approved (here or through a hub) → working again → idle. At each
// phase the suite reads tma's surfaces (ls, status, wait, the hub's ls) and writes down what they
// said; the assertions are made on that record, so one failing phase does not hide the others.

import { execFile } from 'node:child_process';
import type { AgentPane } from './agent-pane.js';
import { HOST, type Fleet } from './fleet.js';

/**
 * An approve that answered the prompt: `sent` when keys went to the pane, `replied` when the
 * agent's own API took the answer (OpenCode's plugin). Anything else left the prompt up.
 */
export const answered = (outcome: string | undefined): boolean => outcome === 'sent' || outcome === 'replied';

export const PROMPT = 'Please append a line to ran.txt';

export interface Look {
  state: string;
  /** The row's detail (which dialog, on a blocked row); absent where the row had none. */
  detail?: string | null;
  prompt_id: string | null;
  pending_summary: string | null;
  /** When the reading began and ended, ms since the epoch. */
  at: number;
  end: number;
}

export interface CellRecord {
  agent: string;
  /** The agent's version that ran. */
  version?: string;
  hooks: boolean;
  rows: number;
  collector: boolean;
  via: 'local' | 'hub';
  idle?: Look;
  working?: Look;
  /** When the suite first saw the prompt on screen (capture-pane, polled every 100 ms). */
  paintedAt?: number;
  /** The reading begun 0.5 s after the paint. */
  blocked?: Look;
  /** The hub's row 0.5 s after the paint (hub cells). */
  hubBlocked?: Look;
  approve?: { code: number; outcome: string; reason: string | null; raw: string; returnedAt: number };
  /** Begun 1 s after the approve returned. */
  after?: { ls: Look; status: { blocked: number }; waitSaysBlocked: boolean; hub?: Look };
  final?: Look;
  toolResults: number;
  toolResultSightings: number;
  ran: number;
  /** The screen when the last reading was not idle (kept with TMA_AGENTS_KEEP, never printed). */
  finalScreen?: string;
  /** Enters pressed again because the first did not submit (see AgentPane.submit). */
  enterAgain?: number;
  /** What the cell is, where it is not one of the matrix's approve runs (claude-dialogs.test.ts). */
  case?: string;
  /** Each answer given through tma, in order: `act:detail:outcome` (a case with more than one). */
  answers?: string[];
  /** Start-up dialogs answered through `tma act` (AgentPane.dialogActs). */
  dialogActs?: string[];
  /** Tool results the agent sent as refusals (the fake server's is_error). */
  rejected?: number;
  error?: string;
}

const none = (at: number): Look => ({ state: '-', prompt_id: null, pending_summary: null, at, end: Date.now() });
const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

function rowLook(stdout: string, pane: string, at: number, server?: string): Look {
  try {
    const doc = JSON.parse(stdout) as {
      agents?: { pane: string; server?: string; state: string; detail?: string | null; prompt_id?: string | null; pending_summary?: string | null }[];
    };
    const row = doc.agents?.find((r) => r.pane === pane && (server === undefined || r.server === server));
    if (!row) return none(at);
    return {
      state: row.state,
      detail: row.detail ?? null,
      prompt_id: row.prompt_id ?? null,
      pending_summary: row.pending_summary ?? null,
      at,
      end: Date.now(),
    };
  } catch {
    return { ...none(at), state: `error: ${stdout.slice(0, 80)}` };
  }
}

export async function lsLook(p: AgentPane): Promise<Look> {
  const at = Date.now();
  const r = await p.run(['ls', '--json', '--pane', p.pane]);
  return rowLook(r.stdout, p.pane, at);
}

async function hubLook(p: AgentPane, fleet: Fleet): Promise<Look> {
  const at = Date.now();
  const r = await fleet.run(['ls', '--json']);
  return rowLook(r.stdout, p.pane, at, p.tmux.socketPath());
}

/** capture-pane without blocking the event loop, so panes run side by side. */
function captureAsync(p: AgentPane): Promise<string> {
  return new Promise((done) => {
    execFile('tmux', ['-L', p.tmux.name, 'capture-pane', '-p', '-t', p.pane], { timeout: 5000, env: { ...process.env, TMUX: '', ...p.tmux.env } }, (err, out) =>
      done(err ? '' : out),
    );
  });
}

export async function until(cond: () => boolean, timeoutMs: number): Promise<number | null> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (cond()) return Date.now();
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

export async function waitForScreen(p: AgentPane, re: RegExp, timeoutMs: number): Promise<number | null> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (re.test(await captureAsync(p))) return Date.now();
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

export async function untilState(look: () => Promise<Look>, want: string, timeoutMs: number): Promise<Look> {
  const end = Date.now() + timeoutMs;
  let l = await look();
  while (l.state !== want && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 500));
    l = await look();
  }
  return l;
}

/** Approve as the cell says: at this host, or through the hub as the operator. */
export async function approve(p: AgentPane, via: 'local' | 'hub', fleet?: Fleet): Promise<NonNullable<CellRecord['approve']>> {
  const r =
    via === 'local'
      ? await p.run(['act', 'approve', '--pane', p.pane, '--json'])
      : await fleet!.run(['act', 'approve', '--host', HOST, '--pane', p.pane, '--json']);
  const returnedAt = Date.now();
  let outcome = `exit ${r.code}`;
  let reason: string | null = (r.stderr || r.stdout).trim().slice(0, 120) || null;
  try {
    const doc = JSON.parse(r.stdout) as { outcome?: string; reason?: string | null };
    outcome = doc.outcome ?? outcome;
    reason = doc.reason ?? null;
  } catch {
    // not JSON: keep the exit code and the message
  }
  return { code: r.code, outcome, reason, raw: `${r.stdout}${r.stderr}`.trim().slice(0, 300), returnedAt };
}

/** Drive one started agent through the phases; never throws (errors land in the record). */
export async function runScenario(p: AgentPane, cell: Omit<CellRecord, 'toolResults' | 'toolResultSightings' | 'ran'>, fleet?: Fleet): Promise<CellRecord> {
  const rec: CellRecord = { ...cell, toolResults: 0, toolResultSightings: 0, ran: 0 };
  try {
    rec.idle = await lsLook(p);
    await p.submit(PROMPT);
    // The model holds its answer (8 s): once the turn reached it, the agent is working.
    if ((await until(() => p.fake.turns > 0, 60_000)) === null) throw new Error(`the prompt never reached the model:\n${p.screen()}`);
    await sleepUntil(p.fake.firstTurnAt + 700);
    rec.working = await lsLook(p);
    if (p.setup.asks) {
      const painted = await waitForScreen(p, p.setup.promptShown, 30_000);
      if (painted === null) throw new Error(`the permission prompt never painted:\n${await captureAsync(p)}\nrequests: ${p.fake.requests.join(', ')}`);
      rec.paintedAt = painted;
      await sleepUntil(painted + 500);
      const [b, h] = await Promise.all([lsLook(p), fleet ? hubLook(p, fleet) : Promise.resolve(undefined)]);
      rec.blocked = b;
      if (h) rec.hubBlocked = h;
      // A person reads the prompt before answering.
      await sleepUntil(painted + 1500);
      rec.approve = await approve(p, cell.via, fleet);
      await sleepUntil(rec.approve.returnedAt + 1000);
      const [ls, status, wait, hub] = await Promise.all([
        lsLook(p),
        p.run(['status', '--format', 'json', '--session', p.session]),
        p.run(['wait', '--until', 'blocked', '--pane', p.pane, '--timeout', '0']),
        fleet ? hubLook(p, fleet) : Promise.resolve(undefined),
      ]);
      let blocked = -1;
      try {
        blocked = (JSON.parse(status.stdout) as { counts: { blocked: number } }).counts.blocked;
      } catch {
        blocked = -1;
      }
      rec.after = { ls, status: { blocked }, waitSaysBlocked: wait.code === 0, ...(hub ? { hub } : {}) };
    }
    // Idle is judged once the model's closing text has gone out (not before: an early "idle"
    // would also count the tool results too soon), with a second for the agent to draw it.
    // An approve that was refused leaves the prompt up: nothing more will happen, one reading.
    if (p.setup.asks && !answered(rec.approve?.outcome)) {
      rec.final = await lsLook(p);
      throw new Error(`the approve was not sent: ${rec.approve?.raw}`);
    }
    const closed = await until(() => p.fake.closed > 0, 30_000);
    if (closed === null) throw new Error(`the model's closing text was never asked for (requests: ${p.fake.requests.join(', ')})`);
    await sleepUntil(closed + 1000);
    rec.final = await untilState(() => lsLook(p), 'idle', 10_000);
    if (rec.final.state !== 'idle') rec.finalScreen = await captureAsync(p);
    // The agent is done: give a replayed request a moment to arrive before counting.
    await new Promise((r) => setTimeout(r, 500));
  } catch (e) {
    rec.error = (e as Error).message.slice(0, 2000);
  }
  rec.toolResults = p.fake.toolResults.length;
  rec.toolResultSightings = p.fake.toolResultSightings;
  rec.ran = p.ranCount();
  rec.enterAgain = p.enterAgain;
  if (p.dialogActs.length) rec.dialogActs = [...p.dialogActs];
  return rec;
}
