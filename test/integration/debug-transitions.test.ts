// `tma debug transitions`: a running collector keeps its server's last state changes in memory and
// hands them to the verb over the server's wake socket; with no collector the verb says so.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';

let scratch: ScratchTmux | null = null;
let child: ChildProcessWithoutNullStreams | null = null;
let dir = '';

afterEach(() => {
  child?.kill('SIGKILL');
  child = null;
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("lists the collector's transitions (no title or screen text), without a collector says there is none; doctor sees its watch", async () => {
  scratch = new ScratchTmux('dtr');
  const s = scratch;
  const pane = s.start();
  const agent = await s.standIn(pane, 'claude', join(REPO, 'test/integration/screens/claude-idle-marked.txt'));
  dir = mkdtempSync(join(tmpdir(), 'tma-debug-transitions-'));
  const env = { TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') };
  const ask = (json: boolean) => tma(['--socket-name', s.name, 'debug', 'transitions', ...(json ? ['--json'] : [])], { env });

  const none = await ask(true);
  expect(none.code).toBe(1);
  expect(none.stdout).toBe('');
  expect(none.stderr).toMatch(/^tma: no collector is running for this tmux server/);

  child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), 'collector', '--stdio', '--socket-name', s.name, '--host-name', 'piped', '--interval', '0.3'], {
    env: { ...process.env, ...env },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await waitFor(() => out.includes('"hello"'), 'hello');
  child.stdin.write(`${JSON.stringify({ type: 'welcome', protocol: 1, resume_from: null })}\n`);
  await waitFor(() => out.includes('"complete":true'), 'snapshot', 10_000);

  /** Asks until `ok` holds for the document (the verb is a separate process, so this polls). */
  const until = async (ok: (d: Doc) => boolean, what: string): Promise<Doc> => {
    const end = Date.now() + 10_000;
    for (;;) {
      const r = await ask(true);
      if (r.code === 0) {
        const d = JSON.parse(r.stdout) as Doc;
        if (ok(d)) return d;
      }
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  };
  type Doc = { schema: number; cap: number; recorded: number; transitions: { pane: string; from: string | null; to: string; at: number; source: string }[] };
  let doc = await until((d) => d.transitions.length === 1, 'the first transition');
  expect(Object.keys(doc)).toEqual(['schema', 'cap', 'recorded', 'transitions']);
  expect(doc).toMatchObject({ schema: 1, cap: 256, recorded: 1, transitions: [{ pane, from: null, to: 'idle', source: 'capture' }] });

  await agent.paint('claude-working.txt');
  doc = await until((d) => d.transitions.length === 2, 'idle → working');
  const t = doc.transitions[1]!;
  expect(t).toMatchObject({ pane, from: 'idle', to: 'working', source: 'capture' });
  expect(t.at).toBe(Number(s.option(pane, '@agent_since')));

  const text = await ask(false);
  expect(text.code).toBe(0);
  expect(text.stdout).toContain(`${pane}     idle    -> working  capture`);
  for (const r of [text.stdout, JSON.stringify(doc)]) {
    expect(r).not.toContain('TITLE-MARK-q7v3');
    expect(r).not.toContain('SCREEN-MARK-k2x9');
  }

  // doctor sees the same collector from tmux: a fresh heartbeat and the session's output watched.
  // (asked again on a loaded machine, where a heartbeat may come late once)
  type DoctorDoc = { heartbeat: { age_ms: number; fresh: boolean }; output_watch: { live: boolean; sessions: { output_clients: number }[] } };
  let d: DoctorDoc | null = null;
  for (let i = 0; i < 5 && !d?.heartbeat.fresh; i++) {
    const dr = await tma(['--socket-name', s.name, 'doctor', '--json'], { env });
    expect(dr.code).toBe(0);
    d = JSON.parse(dr.stdout) as DoctorDoc;
  }
  expect(d!.heartbeat.fresh).toBe(true);
  expect(d!.output_watch).toMatchObject({ live: true, sessions: [{ output_clients: 1 }] });
  expect((await tma(['--socket-name', s.name, 'doctor'], { env })).stdout).toMatch(/output watch: live, 1 of 1 session\(s\) watched/);
}, 60_000);

it('the wake socket answers a history request with the document, and a collector keeping none with NAK', async () => {
  const { askHistory, listenWake, NAK } = await import('../../collector/fleet/wake.js');
  const { createConnection } = await import('node:net');
  dir = mkdtempSync(join(tmpdir(), 'tma-wake-history-'));
  let woken = 0;
  const withDoc = await listenWake(join(dir, 'a.sock'), () => woken++, { history: () => '{"schema":1}' });
  const without = await listenWake(join(dir, 'b.sock'), () => woken++);
  try {
    expect(await askHistory(join(dir, 'a.sock'))).toEqual({ kind: 'document', text: '{"schema":1}' });
    expect(await askHistory(join(dir, 'b.sock'))).toEqual({ kind: 'refused' });
    expect(await askHistory(join(dir, 'nobody.sock'))).toEqual({ kind: 'none' });
    // A line that only starts like the request is refused, not answered.
    const reply = await new Promise<Buffer>((done) => {
      const c = createConnection(join(dir, 'a.sock'), () => c.write('TMAHX\n'));
      const got: Buffer[] = [];
      c.on('data', (b) => got.push(b));
      c.on('close', () => done(Buffer.concat(got)));
    });
    expect([...reply]).toEqual([NAK]);
    // Asking is not a poke: the collector is not woken by it.
    expect(woken).toBe(0);
  } finally {
    withDoc?.close();
    without?.close();
  }
});
