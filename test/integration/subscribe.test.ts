// `tma subscribe --json` against a real tmux server with stand-in agents, read line by line as a
// consumer would. The CLI must be built first.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EDGE_KEYS } from '../../shared/edges.js';
import { ROW_KEYS } from '../../shared/row.js';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';

let t: ScratchTmux;
let dir: string;
let config: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeEach(() => {
  t = new ScratchTmux('sub');
  dir = mkdtempSync(join(tmpdir(), 'tma-sub-'));
  config = join(dir, 'config.toml');
  writeFileSync(config, '[fold]\nfreshness_secs = 0\n');
});

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  t.kill();
  rmSync(dir, { recursive: true, force: true });
});

interface Stream {
  lines: string[];
  exited: Promise<number | null>;
  child: ChildProcessWithoutNullStreams;
  stderr: () => string;
}

function subscribe(args: string[]): Stream {
  const child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), '--socket-name', t.name, '--config', config, 'subscribe', ...args], {
    env: { ...process.env, TMUX: '', TMUX_PANE: '', XDG_CONFIG_HOME: join(dir, 'no-config') },
  });
  children.push(child);
  const lines: string[] = [];
  let buf = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { lines, exited, child, stderr: () => err };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const run = (args: string[]) => tma(['--socket-name', t.name, '--config', config, ...args]);

describe('tma subscribe', () => {
  it('refuses a stream without --json and an interval under 1 s (2)', async () => {
    expect((await run(['subscribe', '--events'])).code).toBe(2);
    expect((await run(['subscribe', '--json', '--interval', '0.5'])).code).toBe(2);
    // A valid call with no server ends with 1.
    expect(await run(['subscribe', '--json', '--interval', '1'])).toEqual({ code: 1, stdout: '', stderr: 'tma: no tmux server running\n' });
  });

  it('--events emits exactly the transitions the stand-ins go through, then exits 0 when the reader leaves', async () => {
    const a = t.start();
    t.tmux('set-option', '-g', 'remain-on-exit', 'on');
    const sa = await t.standIn(a, 'claude', 'claude-working.txt');
    const s = subscribe(['--json', '--events']);
    // The baseline cycle has stamped the stand-in; it must not appear as an edge.
    await waitFor(() => t.option(a, '@agent_state') === 'working', 'baseline cycle');

    const b = t.newPane();
    await t.standIn(b, 'claude', 'claude-working.txt');
    await waitFor(() => s.lines.length >= 1, 'appearance edge', 10_000);
    void sa.paint('claude-idle.txt');
    await waitFor(() => s.lines.length >= 2, 'class-change edge', 10_000);
    sa.exit();
    await waitFor(() => s.lines.length >= 3, 'departure edge', 10_000);
    // Another tick with nothing happening adds nothing.
    await sleep(1300);

    const edges = s.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(edges.map((e) => [e.pane, e.from, e.to])).toEqual([
      [b, '', 'working'],
      [a, 'working', 'done'],
      [a, 'done', ''],
    ]);
    for (const e of edges) {
      expect(Object.keys(e)).toEqual([...EDGE_KEYS]);
      expect(e.server).toBe(t.socketPath());
      expect(typeof e.host).toBe('string');
      expect(e.agent).toBe('claude');
    }
    expect((edges[1]!.at_ms as number) >= (edges[0]!.at_ms as number)).toBe(true);

    // The reader leaves; the next line the stream writes finds the pipe closed.
    s.child.stdout.destroy();
    await t.standIn(t.newPane(), 'claude', 'claude-working.txt');
    expect(await s.exited).toBe(0);
    expect(s.stderr()).toBe('');
  });

  it('snapshots: the current document first, then one line per tick; --changes-only only on change', async () => {
    t.start();
    const every = subscribe(['--json']);
    const changes = subscribe(['--json', '--changes-only']);
    await waitFor(() => every.lines.length >= 3, 'three snapshot lines', 10_000);
    expect(every.lines.slice(0, 3)).toEqual(['{"schema":1,"agents":[]}', '{"schema":1,"agents":[]}', '{"schema":1,"agents":[]}']);
    expect(changes.lines).toEqual(['{"schema":1,"agents":[]}']);

    const pane = t.newPane();
    await t.standIn(pane, 'claude', 'claude-working.txt');
    // A cycle can read the title just before the stand-in sets it and the screen just after, and
    // publish a passing verdict first; the next cycle settles it. So wait for the working line.
    await waitFor(() => changes.lines.some((l) => l.includes('"state":"working"')), 'a snapshot with the working agent', 10_000);
    const doc = JSON.parse(changes.lines.find((l) => l.includes('"state":"working"'))!) as { schema: number; agents: { pane: string; state: string }[] };
    expect(doc.agents.map((r) => [r.pane, r.state])).toEqual([[pane, 'working']]);
    // --changes-only never repeats a line.
    for (let i = 1; i < changes.lines.length; i++) expect(changes.lines[i]).not.toBe(changes.lines[i - 1]);
    // Each snapshot line is the ls --json document: schema first, rows with the exact row keys.
    expect(Object.keys(doc)).toEqual(['schema', 'agents']);
    expect(Object.keys(doc.agents[0]!)).toEqual([...ROW_KEYS]);

    t.kill();
    expect(await changes.exited).toBe(1);
    expect(changes.stderr()).toBe('tma: no tmux server running\n');
  });

  it('reloads config every tick: an agent enabled mid-stream shows in the next snapshot', async () => {
    writeFileSync(config, '[fold]\nfreshness_secs = 0\n[[agent]]\nname = "claude"\nenabled = false\n');
    const pane = t.start();
    await t.standIn(pane, 'claude', 'claude-working.txt');
    const st = subscribe(['--json', '--changes-only']);
    await waitFor(() => st.lines.length >= 1, 'the first snapshot', 10_000);
    await sleep(1200);
    expect(st.lines).toEqual(['{"schema":1,"agents":[]}']);
    writeFileSync(config, '[fold]\nfreshness_secs = 0\n');
    await waitFor(() => st.lines.length >= 2, 'a snapshot with the enabled agent', 10_000);
    expect((JSON.parse(st.lines[1]!) as { agents: { pane: string }[] }).agents.map((r) => r.pane)).toEqual([pane]);
    expect(st.stderr()).toBe('');
  });
});
