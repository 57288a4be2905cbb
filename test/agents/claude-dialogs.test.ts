// Claude Code's answers other than the matrix's approve, on every version the suite runs: deny on
// the permission dialog ("No" is option 3 on 2.1.197, 4 on 2.1.332; deny sends Escape), and the
// dialogs 2.1.332 added, each read through tma and answered with its own keys: the first-start
// "Make auto mode your default permission mode?", and in auto mode against a gateway that does not
// pass the server-side check (the fake model server) "Auto mode can't check actions in this
// session", after whose "stay" each call asks with "No" first. Every case lands in the table.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentPane, type PaneOptions } from './agent-pane.js';
import { AgentTmux } from './agent-tmux.js';
import { selected, versionsOf } from './agents.js';
import { record } from './results.js';
import { lsLook, PROMPT, until, untilState, waitForScreen, type CellRecord, type Look } from './scenario.js';

const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

type Kind = 'deny' | 'offer' | 'check-approve' | 'check-deny';

interface Seen {
  /** `act --list --pane`: action name → fireable. */
  list: Record<string, boolean>;
  /** `act <name> --dry-run --json`: the effect line. */
  effect: string | null;
  look: Look;
}

interface Run {
  kind: Kind;
  version: string;
  pane: AgentPane;
  cell: CellRecord;
  /** What tma showed at each dialog, before it was answered. */
  seen: Seen[];
  /** The screen right after the last answer (the offer: which mode it left). */
  screenAfter?: string;
}

async function actJson(p: AgentPane, args: string[]): Promise<Record<string, unknown>> {
  const r = await p.run(['act', ...args, '--json']);
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    return { outcome: `exit ${r.code}`, raw: `${r.stdout}${r.stderr}`.slice(0, 200) };
  }
}

/** What tma says about the dialog now (ls stamps it; --list and --dry-run read that stamp). */
async function look(p: AgentPane, name: 'approve' | 'deny'): Promise<Seen> {
  const l = await untilState(() => lsLook(p), 'blocked', 5000);
  const list = await actJson(p, ['--list', '--pane', p.pane]);
  const dry = await actJson(p, [name, '--dry-run', '--pane', p.pane]);
  const entries = (list.actions as { name: string; fireable?: boolean }[] | undefined) ?? [];
  return { list: Object.fromEntries(entries.map((a) => [a.name, a.fireable === true])), effect: (dry.effect as string | undefined) ?? null, look: l };
}

/**
 * Answer through tma; the outcome goes into the cell as `act:detail:outcome` (the detail tma read).
 * `twice`: two answers at once, both bound to the prompt_id tma showed (as two approvers would):
 * exactly one may be sent, and neither may reach the dialog that follows.
 */
async function answer(run: Run, name: 'approve' | 'deny', twice = false): Promise<string> {
  const l = run.seen.at(-1)?.look;
  const bound = twice && l?.prompt_id ? ['--expect-prompt', l.prompt_id] : [];
  const args = [name, '--pane', run.pane.pane, ...bound];
  const docs = await Promise.all((twice ? [args, args] : [args]).map((a) => actJson(run.pane, a)));
  const outcomes = docs
    .map((doc) => `${String(doc.outcome)}${doc.reason ? `/${String(doc.reason)}` : ''}`)
    .sort((a, b) => (a === 'sent' ? 1 : b === 'sent' ? -1 : 0));
  (run.cell.answers ??= []).push(`${name}:${l?.state === 'blocked' ? (l.detail ?? '-') : (l?.state ?? '?')}:${outcomes.join('+')}`);
  return docs.some((d) => d.outcome === 'sent') ? 'sent' : String(docs[0]!.outcome);
}

async function finish(run: Run, closedTimeoutMs = 30_000): Promise<void> {
  const p = run.pane;
  const closed = await until(() => p.fake.closed > 0, closedTimeoutMs);
  if (closed === null) throw new Error(`the model's closing text was never asked for:\n${p.screen()}`);
  await sleepUntil(closed + 1000);
  run.cell.final = await untilState(() => lsLook(p), 'idle', 10_000);
}

/** A refused call reaches the model only with the next message: one is sent after the deny. */
async function afterRefusal(run: Run): Promise<void> {
  const p = run.pane;
  await new Promise((r) => setTimeout(r, 1500));
  run.screenAfter = p.screen();
  run.cell.after = { ls: await lsLook(p), status: { blocked: -1 }, waitSaysBlocked: false };
  await p.submit('Never mind, leave it');
  await finish(run);
}

async function dialog(run: Run, shown: RegExp, name: 'approve' | 'deny', twice = false): Promise<string> {
  const painted = await waitForScreen(run.pane, shown, 30_000);
  if (painted === null) throw new Error(`${shown} never painted:\n${run.pane.screen()}`);
  await sleepUntil(painted + 500);
  run.seen.push(await look(run.pane, name));
  run.cell.blocked ??= run.seen.at(-1)!.look;
  // A person reads it before answering.
  await sleepUntil(painted + 1500);
  return answer(run, name, twice);
}

async function drive(run: Run): Promise<void> {
  const p = run.pane;
  const c = run.cell;
  await p.start();
  if (run.kind === 'offer') {
    await dialog(run, /Make auto mode your default permission mode\?/, 'approve');
    await new Promise((r) => setTimeout(r, 1500));
    run.screenAfter = p.screen();
    c.final = await untilState(() => lsLook(p), 'idle', 10_000);
    return;
  }
  c.idle = await lsLook(p);
  await p.submit(PROMPT);
  if ((await until(() => p.fake.turns > 0, 60_000)) === null) throw new Error(`the prompt never reached the model:\n${p.screen()}`);
  await sleepUntil(p.fake.firstTurnAt + 700);
  c.working = await lsLook(p);
  if (run.kind === 'deny') {
    // Two refusals at once, bound to the prompt shown: one Escape (a second would reach the prompt box).
    await dialog(run, /Do you want to proceed\?/, 'deny', true);
    return afterRefusal(run);
  }
  const check = /Enter to stay in auto mode/;
  if (run.kind === 'check-deny') {
    await dialog(run, check, 'deny', true);
    return afterRefusal(run);
  }
  // Stay in auto mode; the call then asks, "No" first, and approve picks "Yes". Two approvers
  // at each: one answer per dialog, and the first dialog's second approve never reaches the next.
  if ((await dialog(run, check, 'approve', true)) !== 'sent') throw new Error(`stay was not sent:\n${p.screen()}`);
  await waitForScreen(p, new RegExp(`^(?![\\s\\S]*${check.source})`), 10_000);
  await dialog(run, /so this one needs your approval[\s\S]*Do you want to proceed\?/, 'approve', true);
  await finish(run);
}

const VERSIONS = versionsOf('claude');
const LATER = VERSIONS.slice(1);
const KINDS: { kind: Kind; version: string }[] = [
  ...VERSIONS.map((version) => ({ kind: 'deny' as const, version })),
  ...LATER.flatMap((version) => (['offer', 'check-approve', 'check-deny'] as const).map((kind) => ({ kind, version }))),
];

let server: AgentTmux | null = null;
const runs: Run[] = [];

function paneFor(kind: Kind, version: string): AgentPane {
  const base: PaneOptions = { agent: 'claude', version, rows: 40, hooks: false };
  if (kind === 'offer') return new AgentPane(server!, { ...base, keepDialogs: true });
  // The check dialog: the release's own auto mode, and a call auto mode does not let through by
  // itself (a python one-liner; `echo >> file` in the project runs unasked).
  if (kind === 'check-approve' || kind === 'check-deny') {
    return new AgentPane(server!, { ...base, autoMode: true, commands: (project) => [`python3 -c "open('${project}/ran.txt','a').write('ran\\n')"`] });
  }
  return new AgentPane(server!, base);
}

beforeAll(async () => {
  if (!selected('claude')) return;
  server = new AgentTmux('ag-dialogs');
  server.start();
  const queue = [...KINDS];
  // Three at a time, as the matrix runs an agent's cells.
  await Promise.all(
    Array.from({ length: 3 }, async () => {
      for (let k = queue.shift(); k !== undefined; k = queue.shift()) {
        const pane = paneFor(k.kind, k.version);
        const cell: CellRecord = {
          agent: 'claude',
          version: k.version,
          case: k.kind,
          hooks: false,
          rows: 40,
          collector: false,
          via: 'local',
          toolResults: 0,
          toolResultSightings: 0,
          ran: 0,
        };
        const run: Run = { kind: k.kind, version: k.version, pane, cell, seen: [] };
        runs.push(run);
        try {
          await drive(run);
        } catch (e) {
          cell.error = (e as Error).message.slice(0, 2000);
        }
        await new Promise((r) => setTimeout(r, 500));
        cell.toolResults = pane.fake.toolResults.length;
        cell.toolResultSightings = pane.fake.toolResultSightings;
        cell.rejected = pane.fake.toolResults.filter((t) => t.isError === true).length;
        cell.ran = pane.ranCount();
        if (pane.dialogActs.length) cell.dialogActs = [...pane.dialogActs];
        record(cell);
      }
    }),
  );
}, 420_000);

afterAll(async () => {
  await Promise.all(runs.map((r) => r.pane.close()));
  server?.kill();
}, 60_000);

const runOf = (kind: Kind, version: string) => runs.find((r) => r.kind === kind && r.version === version)!;

describe.skipIf(!selected('claude')).each(VERSIONS)('claude %s', (version) => {
  it('deny refuses the permission dialog: one tool result reaches the model, a refusal; nothing ran', () => {
    const r = runOf('deny', version);
    const c = r.cell;
    expect.soft(c.error).toBeUndefined();
    expect.soft(c.working?.state, 'working while the model answers').toBe('working');
    expect.soft(r.seen[0]?.look.state).toBe('blocked');
    expect.soft(r.seen[0]?.look.pending_summary ?? '', 'what is asked').toContain('ran.txt');
    expect.soft(r.seen[0]?.list, 'act --list on the pane').toMatchObject({ approve: true, deny: true, interrupt: false });
    expect.soft(r.seen[0]?.effect).toBe('keys: Escape');
    expect.soft(c.answers?.[0], 'of two denies bound to the prompt, one sent').toMatch(/^deny:permission:refused\/[a-z-]+\+sent$/);
    expect.soft(c.after?.ls.state, 'not blocked after the deny').not.toBe('blocked');
    expect.soft(r.pane.fake.toolResults.length, 'exactly one tool result').toBe(1);
    expect.soft(r.pane.fake.toolResults[0]?.isError, `a refusal: ${r.pane.fake.toolResults[0]?.output}`).toBe(true);
    expect.soft(r.pane.ranCount(), 'the command never ran').toBe(0);
    expect.soft(c.final?.state).toBe('idle');
  });
});

describe.skipIf(!selected('claude') || LATER.length === 0).each(LATER)('claude %s dialogs', (version) => {
  it('"Make auto mode your default permission mode?" reads blocked with the question, and approve answers it with Enter', () => {
    const r = runOf('offer', version);
    expect.soft(r.cell.error).toBeUndefined();
    const s = r.seen[0];
    expect.soft(s?.look.state).toBe('blocked');
    expect.soft(s?.look.pending_summary ?? '', 'the summary is the question').toContain('Make auto mode your default permission mode?');
    expect.soft(s?.list, 'act --list offers approve and deny').toMatchObject({ approve: true, deny: true });
    expect.soft(s?.effect).toBe('keys: Enter');
    expect.soft(r.cell.answers).toEqual(['approve:auto-mode-offer:sent']);
    expect.soft(r.screenAfter ?? '', 'the offer is gone').not.toContain('Make auto mode your default permission mode?');
    expect.soft(r.screenAfter ?? '', 'auto mode is on').toContain('auto mode on');
    expect.soft(r.screenAfter ?? '', 'no "1" typed into the prompt box').not.toMatch(/^❯ 1\s*$/m);
    expect.soft(r.cell.final?.state).toBe('idle');
  });

  it('"Auto mode can\'t check actions in this session": blocked with what it asks; approve stays, then answers the No-first approval once', () => {
    const r = runOf('check-approve', version);
    expect.soft(r.cell.error).toBeUndefined();
    const [check, approval] = r.seen;
    expect.soft(check?.look.state).toBe('blocked');
    expect.soft(check?.look.pending_summary ?? '', 'what it asks').toContain("Auto mode can't check actions in this session");
    expect.soft(check?.list).toMatchObject({ approve: true, deny: true });
    expect.soft(check?.effect, 'stay in auto mode').toBe('keys: Enter');
    expect.soft(approval?.look.state, 'the approval that follows reads blocked').toBe('blocked');
    expect.soft(approval?.look.pending_summary ?? '', 'and names the command').toContain('ran.txt');
    expect.soft(approval?.look.prompt_id, 'another prompt than the check').not.toBe(check?.look.prompt_id);
    expect.soft(approval?.effect, 'Down to "Yes" (the cursor starts on "No"), Enter').toBe('keys: Down Enter');
    // Two approvers at each dialog, both bound to its prompt_id: one sent, the other refused.
    const [a1, a2] = r.cell.answers ?? [];
    expect.soft(a1, 'one of two approves stays in auto mode').toMatch(/^approve:auto-mode-check:refused\/[a-z-]+\+sent$/);
    expect.soft(a2, 'one of two approves answers the approval').toMatch(/^approve:permission-cursor-no:refused\/[a-z-]+\+sent$/);
    expect
      .soft(
        r.pane.fake.toolResults.map((t) => t.isError),
        'one tool result, not a refusal',
      )
      .toEqual([false]);
    expect.soft(r.pane.ranCount(), 'the command ran once').toBe(1);
    expect.soft(r.cell.final?.state).toBe('idle');
  });

  it('"Auto mode can\'t check actions in this session": deny cancels the turn with Escape; nothing ran, one refusal reaches the model', () => {
    const r = runOf('check-deny', version);
    expect.soft(r.cell.error).toBeUndefined();
    expect.soft(r.seen[0]?.look.state).toBe('blocked');
    expect.soft(r.seen[0]?.effect).toBe('keys: Escape');
    expect.soft(r.cell.answers?.[0], 'of two denies, one sent').toMatch(/^deny:auto-mode-check:refused\/[a-z-]+\+sent$/);
    expect.soft(r.cell.after?.ls.state, 'not blocked after the deny').not.toBe('blocked');
    expect.soft(r.screenAfter ?? '', 'still in auto mode (shift+Tab was not pressed)').toContain('auto mode on');
    expect
      .soft(
        r.pane.fake.toolResults.map((t) => t.isError),
        'one tool result, a refusal',
      )
      .toEqual([true]);
    expect.soft(r.pane.ranCount(), 'the command never ran').toBe(0);
    expect.soft(r.cell.final?.state).toBe('idle');
  });
});
