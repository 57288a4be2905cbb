// The hook's fast path: bin/tma-hook hands the event to a running collector over its wake socket
// (bin/tma-hook-send.py) and only an ACK ends it there; anything else falls back to `tma event`.
// Part one checks the socket protocol against a bare listener; part two runs the real thing: a
// scratch tmux server, a `tma collector` process and a fake hub.

import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ACK,
  canonicalSocketPath,
  EVENT_MAGIC,
  listenWake,
  MAX_EVENT_LINE,
  NAK,
  wakeDir,
  wakeSocketPath,
  type HookDelivery,
  type WakeListener,
} from '../../collector/fleet/wake.js';
import { REPO, ScratchTmux, waitFor } from '../support/scratch-tmux.js';
import { FakeHub, type HubConn } from './fake-hub.js';

const HOOK = join(REPO, 'bin/tma-hook');
const SEND = join(REPO, 'bin/tma-hook-send.py');
const SCREENS = join(REPO, 'test/integration/screens');

let dir = '';
let listener: WakeListener | null = null;
let holder: Server | null = null;
let scratch: ScratchTmux | null = null;
let hub: FakeHub | null = null;
let collector: ChildProcess | null = null;

afterEach(async () => {
  listener?.close();
  listener = null;
  holder?.close();
  holder = null;
  collector?.kill('SIGKILL');
  collector = null;
  await hub?.close();
  hub = null;
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Run a program without blocking this process (an in-process hub or listener must keep answering). */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<Run> {
  return new Promise((done) => {
    const t0 = Date.now();
    const c = spawn(cmd, args, { env });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => c.kill('SIGKILL'), 15_000);
    c.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, ms: Date.now() - t0 });
    });
    c.stdin.end(input);
  });
}

/** A stand-in for `tma` that records each run (argv and stdin) and then does nothing else. */
function recorder(into: string, thenRun = false): string {
  const script = join(dir, 'tma-recorder');
  writeFileSync(
    script,
    `#!/bin/sh\ncat > "${into}.stdin"\necho "$*" >> "${into}"\n` +
      (thenRun ? `exec "${process.execPath}" "${join(REPO, 'bin/tma.js')}" "$@" < "${into}.stdin"\n` : 'exit 0\n'),
  );
  chmodSync(script, 0o755);
  return script;
}

/** Send raw bytes to a wake socket; resolves with the reply bytes once the listener closes. */
function exchange(path: string, bytes: Buffer | string, keepOpen = true): Promise<{ reply: Buffer; ms: number }> {
  return new Promise((done, fail) => {
    const t0 = Date.now();
    const s = createConnection(path);
    const got: Buffer[] = [];
    s.on('data', (d) => got.push(d));
    s.on('error', fail);
    s.on('close', () => done({ reply: Buffer.concat(got), ms: Date.now() - t0 }));
    s.on('connect', () => {
      s.write(bytes);
      if (!keepOpen) s.end();
    });
  });
}

const frame = (ev: Record<string, unknown>) => `${EVENT_MAGIC}${JSON.stringify(ev)}\n`;
const EV = { agent: 'claude', kind: 'Stop', pane: '%3', payload: '{"session_id":"s"}' };

describe('the wake socket protocol', () => {
  let events: HookDelivery[] = [];
  let wakes = 0;

  async function listen(onEvent: (ev: HookDelivery) => Promise<boolean>, deadlineMs?: number): Promise<string> {
    dir = mkdtempSync(join(tmpdir(), 'tma-wake-proto-'));
    events = [];
    wakes = 0;
    const path = join(dir, 'run', 'wake-test.sock');
    listener = await listenWake(path, () => wakes++, {
      onEvent: (ev) => {
        events.push(ev);
        return onEvent(ev);
      },
      ...(deadlineMs === undefined ? {} : { deadlineMs }),
    });
    expect(listener).not.toBeNull();
    return path;
  }

  it('still counts a connection closed without a byte as a poke, and nothing else', async () => {
    const path = await listen(async () => true);
    const { reply } = await exchange(path, '', false);
    expect(reply.length).toBe(0);
    await waitFor(() => wakes === 1, 'the poke');
    expect(events).toEqual([]);
  });

  it('lets go of a connection that stays silent, as a poke', async () => {
    const path = await listen(async () => true);
    const { reply, ms } = await exchange(path, '');
    expect(reply.length).toBe(0);
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(2500);
    expect(wakes).toBe(1);
  });

  it('answers one ACK byte when the event was handled, and hands over exactly what was sent', async () => {
    const path = await listen(async () => true);
    const ev = { ...EV, payload: '{"session_id":"s","x":"é☃\\n"}\n\n' };
    const { reply } = await exchange(path, frame(ev));
    expect([...reply]).toEqual([ACK]);
    expect(events).toEqual([ev]);
    expect(wakes).toBe(0);
  });

  it('takes a frame that arrives in pieces', async () => {
    const path = await listen(async () => true);
    const s = createConnection(path);
    const got: Buffer[] = [];
    s.on('data', (d) => got.push(d));
    const closed = new Promise((r) => s.on('close', r));
    const text = frame(EV);
    for (const piece of [text.slice(0, 2), text.slice(2, 7), text.slice(7)]) {
      s.write(piece);
      await new Promise((r) => setTimeout(r, 30));
    }
    await closed;
    expect([...Buffer.concat(got)]).toEqual([ACK]);
    expect(events).toEqual([EV]);
  });

  it('answers NAK when the handler declines, throws, or fails', async () => {
    let path = await listen(async () => false);
    expect([...(await exchange(path, frame(EV))).reply]).toEqual([NAK]);
    listener!.close();
    rmSync(dir, { recursive: true, force: true });
    path = await listen(async () => {
      throw new Error('tmux went away');
    });
    expect([...(await exchange(path, frame(EV))).reply]).toEqual([NAK]);
    expect(events).toHaveLength(1);
  });

  it('answers NAK once the deadline passes, and ACK when the work ends just inside it', async () => {
    const slow = (ms: number) => () => new Promise<boolean>((r) => setTimeout(() => r(true), ms));
    let path = await listen(slow(300), 150);
    const late = await exchange(path, frame(EV));
    expect([...late.reply]).toEqual([NAK]);
    expect(late.ms).toBeGreaterThanOrEqual(140);
    expect(late.ms).toBeLessThan(290);
    listener!.close();
    rmSync(dir, { recursive: true, force: true });
    path = await listen(slow(100), 150);
    const inTime = await exchange(path, frame(EV));
    expect([...inTime.reply]).toEqual([ACK]);
    expect(inTime.ms).toBeGreaterThanOrEqual(95);
  });

  it.each([
    ['bytes that are not a TMA1 frame', 'HELLO {}\n'],
    ['a frame that is not JSON', `${EVENT_MAGIC}{"agent":\n`],
    ['a frame that is not an object', `${EVENT_MAGIC}["claude","Stop","%3",""]\n`],
    ['a frame without a pane', frame({ agent: 'claude', kind: 'Stop', payload: '' })],
    ['a pane that is not a pane id', frame({ ...EV, pane: 'main:0' })],
    ['an empty agent', frame({ ...EV, agent: '' })],
    ['a payload that is not text', frame({ ...EV, payload: { session_id: 's' } })],
  ])('answers NAK to %s, without calling the handler', async (_what, bytes) => {
    const path = await listen(async () => true);
    expect([...(await exchange(path, bytes)).reply]).toEqual([NAK]);
    expect(events).toEqual([]);
    expect(wakes).toBe(0);
  });

  it('answers NAK to a frame cut off before its newline, in bounded time', async () => {
    const path = await listen(async () => true);
    const { reply, ms } = await exchange(path, `${EVENT_MAGIC}{"agent":"claude"`);
    expect([...reply]).toEqual([NAK]);
    expect(ms).toBeLessThan(2500);
    expect(events).toEqual([]);
  });

  it('accepts a line of exactly the size bound and refuses one byte more', async () => {
    const path = await listen(async () => true);
    const lineOf = (len: number) => {
      const bare = frame({ ...EV, payload: '' }).length - 1;
      return frame({ ...EV, payload: 'p'.repeat(len - bare) });
    };
    for (const [len, byte] of [
      [MAX_EVENT_LINE - 1, ACK],
      [MAX_EVENT_LINE, ACK],
      [MAX_EVENT_LINE + 1, NAK],
    ] as const) {
      const line = lineOf(len);
      expect(Buffer.byteLength(line) - 1).toBe(len);
      expect([...(await exchange(path, line)).reply]).toEqual([byte]);
    }
    expect(events.map((e) => e.payload.length)).toHaveLength(2);
  });
});

describe('the hook client and wrapper against a bare listener', () => {
  /** Listen where the client will look for the server named by `socket`; NAK or ACK as told. */
  async function listenFor(socket: string, answer: boolean): Promise<{ env: NodeJS.ProcessEnv; events: HookDelivery[] }> {
    dir = mkdtempSync(join(tmpdir(), 'tma-hook-client-'));
    const env = { ...process.env, TMUX: '', TMA_HOOK_SOCKET: '', TMA_SOCKET_PATH: socket, TMUX_PANE: '%7', XDG_RUNTIME_DIR: join(dir, 'run') };
    const events: HookDelivery[] = [];
    listener = await listenWake(wakeSocketPath(canonicalSocketPath(socket), wakeDir(env)), () => undefined, {
      onEvent: async (ev) => {
        events.push(ev);
        return answer;
      },
    });
    expect(listener).not.toBeNull();
    return { env, events };
  }

  it('exits 0 on ACK, 1 on NAK, and 2 when nobody listens or no pane is known', async () => {
    const socket = join(tmpdir(), `tma-client-${process.pid}`);
    const { env, events } = await listenFor(socket, true);
    expect(await run('/usr/bin/python3', [SEND, 'claude', 'Stop'], env, '{"a":1}')).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(events).toEqual([{ agent: 'claude', kind: 'Stop', pane: '%7', payload: '{"a":1}' }]);
    expect((await run('/usr/bin/python3', [SEND, 'claude', 'Stop'], { ...env, TMUX_PANE: '' })).code).toBe(2);
    expect(events).toHaveLength(1);
    listener!.close();
    listener = null;
    expect(await run('/usr/bin/python3', [SEND, 'claude', 'Stop'], env)).toMatchObject({ code: 2, stdout: '', stderr: '' });
    rmSync(dir, { recursive: true, force: true });
    const nak = await listenFor(socket, false);
    expect(await run('/usr/bin/python3', [SEND, 'claude', 'Stop'], nak.env)).toMatchObject({ code: 1, stdout: '', stderr: '' });
    expect(nak.events).toHaveLength(1);
  });

  it('gives up after about 500 ms on a listener that never answers', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tma-hook-client-'));
    const socket = join(dir, 'srv');
    const env = { ...process.env, TMUX: '', TMA_HOOK_SOCKET: '', TMA_SOCKET_PATH: socket, TMUX_PANE: '%7', XDG_RUNTIME_DIR: join(dir, 'run') };
    const path = wakeSocketPath(canonicalSocketPath(socket), wakeDir(env));
    mkdirSync(wakeDir(env), { recursive: true });
    holder = createServer(() => undefined);
    await new Promise<void>((r) => holder!.listen(path, () => r()));
    const r = await run('/usr/bin/python3', [SEND, 'claude', 'Stop'], env);
    expect(r.code).toBe(2);
    expect(r.ms).toBeGreaterThanOrEqual(480);
    expect(r.ms).toBeLessThan(2000);
  });

  it('the wrapper ends at an ACK, with the payload from stdin or argv byte for byte', async () => {
    const socket = join(tmpdir(), `tma-client-${process.pid}`);
    const { env, events } = await listenFor(socket, true);
    const log = join(dir, 'ran');
    const wenv = { ...env, TMA_BIN: recorder(log) };
    // Quotes, backslashes, control characters and non-ASCII text must survive the client's escaping.
    const stdinPayload = '{"session_id":"s1","t":"é☃ \\\\ \\"q\\" \u0001\t"}\r\n\n';
    expect(await run(HOOK, ['claude', 'UserPromptSubmit'], wenv, stdinPayload)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await run(HOOK, ['codex', 'notify', '{"type":"agent-turn-complete"}\n'], wenv)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(events).toEqual([
      { agent: 'claude', kind: 'UserPromptSubmit', pane: '%7', payload: stdinPayload },
      { agent: 'codex', kind: 'notify', pane: '%7', payload: '{"type":"agent-turn-complete"}\n' },
    ]);
    expect(existsSync(log)).toBe(false);
  });

  it('the wrapper falls back on a NAK, giving `tma event` the same payload it read from stdin', async () => {
    const socket = join(tmpdir(), `tma-client-${process.pid}`);
    const { env, events } = await listenFor(socket, false);
    const log = join(dir, 'ran');
    const wenv = { ...env, TMA_BIN: recorder(log) };
    const payload = '{"session_id":"s2","big":"' + 'x'.repeat(200_000) + '"}\n';
    expect(await run(HOOK, ['claude', 'Stop'], wenv, payload)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toBe(payload);
    expect(readFileSync(log, 'utf8')).toBe('event --agent claude --kind Stop --payload -\n');
    expect(readFileSync(`${log}.stdin`, 'utf8')).toBe(payload);
  });

  it('the wrapper falls back when no python is there, passing stdin straight through', async () => {
    const socket = join(tmpdir(), `tma-client-${process.pid}`);
    const { env, events } = await listenFor(socket, true);
    const log = join(dir, 'ran');
    const wenv = { ...env, TMA_BIN: recorder(log), TMA_PYTHON: join(dir, 'no-such-python') };
    expect(await run(HOOK, ['claude', 'Stop'], wenv, '{"p":1}')).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(events).toEqual([]);
    expect(readFileSync(`${log}.stdin`, 'utf8')).toBe('{"p":1}');
  });
});

type Frame = Record<string, unknown> & { type: string };
const framesOf = (c: HubConn): Frame[] => c.frames.map((f) => f.frame as Frame);
const rowsIn = (f: Frame): Record<string, unknown>[] =>
  f.type === 'delta'
    ? (f.upserts as Record<string, unknown>[])
    : f.type === 'snapshot'
      ? (f.servers as { rows: Record<string, unknown>[] }[]).flatMap((s) => s.rows)
      : [];

describe('with a real collector', () => {
  async function setUp(withCollector: boolean): Promise<{ pane: string; env: NodeJS.ProcessEnv; log: string; conn: () => HubConn }> {
    scratch = new ScratchTmux('hfp');
    const pane = scratch.start();
    await scratch.standIn(pane, 'claude', join(SCREENS, 'claude-idle-marked.txt'));
    dir = mkdtempSync(join(tmpdir(), 'tma-hook-fast-'));
    const log = join(dir, 'ran');
    const base = { ...process.env, TMUX: '', TMA_SOCKET_PATH: '', TMUX_PANE: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') };
    const env = { ...base, TMUX_PANE: pane, TMA_HOOK_SOCKET: scratch.name, TMA_BIN: recorder(log, true) };
    if (!withCollector) return { pane, env, log, conn: () => hub!.conns[0]! };
    writeFileSync(join(dir, 'token'), 'tok\n');
    hub = await FakeHub.start({ token: 'tok' });
    collector = spawn(
      process.execPath,
      [
        join(REPO, 'bin/tma.js'),
        'collector',
        '--hub',
        `ws://127.0.0.1:${hub.port}`,
        '--token-file',
        join(dir, 'token'),
        '--socket-name',
        scratch.name,
        '--interval',
        '30',
        '--host-name',
        'fast-box',
      ],
      { env: base, stdio: 'ignore' },
    );
    const h = hub;
    await waitFor(() => h.conns[0]?.frames.some((f) => f.frame.type === 'snapshot') === true, 'first snapshot', 10_000);
    await waitFor(() => existsSync(wakeSocketPath(canonicalSocketPath(scratch!.socketPath()), wakeDir(base))), 'the wake socket', 5000);
    return { pane, env, log, conn: () => h.conns[0]! };
  }

  const isState = (pane: string, state: string) => (f: Frame) => f.type === 'delta' && rowsIn(f).some((r) => r.pane === pane && r.state === state);

  it('the collector stamps the hook event and publishes it at once; no `tma event` runs', async () => {
    const { pane, env, log, conn } = await setUp(true);
    const t0 = Date.now();
    expect(await run(HOOK, ['claude', 'UserPromptSubmit'], env, '{"session_id":"fast-1"}')).toMatchObject({ code: 0, stdout: '', stderr: '' });
    await waitFor(() => framesOf(conn()).some(isState(pane, 'working')), 'working delta', 3000);
    expect(conn().frames.find((f) => isState(pane, 'working')(f.frame as Frame))!.at - t0).toBeLessThan(1000);
    expect(scratch!.option(pane, '@agent_state')).toBe('working');
    expect(scratch!.option(pane, '@agent_source')).toBe('hook');
    // The payload made it through: the session id was registered from it.
    expect(scratch!.option(pane, '@agent_session')).toBe('fast-1');

    // The payload as a third argument (Codex's notify shape) takes the same path.
    const t1 = Date.now();
    expect(await run(HOOK, ['claude', 'Stop', '{"session_id":"fast-1"}'], env)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    await waitFor(() => framesOf(conn()).some(isState(pane, 'idle')), 'idle delta', 3000);
    expect(conn().frames.find((f) => isState(pane, 'idle')(f.frame as Frame))!.at - t1).toBeLessThan(1000);
    expect(scratch!.option(pane, '@agent_attention')).toBe('1');
    expect(existsSync(log)).toBe(false);
  });

  it('a context payload through the hook fills the gauge, and the hub row shows it', async () => {
    const { pane, env, log, conn } = await setUp(true);
    const payload = '{"version":"2.1.140","context_window":{"used_percentage":64,"total_input_tokens":128000}}';
    expect(await run(HOOK, ['claude', 'context'], env, payload)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(scratch!.option(pane, '@agent_context_pct')).toBe('64');
    expect(scratch!.option(pane, '@agent_tokens')).toBe('128000');
    const shows = (f: Frame) => rowsIn(f).some((r) => r.pane === pane && r.context === 64 && r.tokens === 128000);
    await waitFor(() => framesOf(conn()).some(shows), 'a row with the gauge', 5000);
    expect(existsSync(log)).toBe(false);
  });

  it('the collector refuses an agent it has no manifest for, and the client says so', async () => {
    const { pane, env } = await setUp(true);
    const before = scratch!.option(pane, '@agent_stamped_at');
    const r = await run('/usr/bin/python3', [SEND, 'no-such-agent', 'UserPromptSubmit'], env, '{}');
    expect(r).toMatchObject({ code: 1, stdout: '', stderr: '' });
    expect(scratch!.option(pane, '@agent_state')).not.toBe('working');
    expect(scratch!.option(pane, '@agent_stamped_at')).toBe(before);
    const ok = await run('/usr/bin/python3', [SEND, 'claude', 'UserPromptSubmit'], env, '{}');
    expect(ok.code).toBe(0);
    expect(scratch!.option(pane, '@agent_state')).toBe('working');
    expect(scratch!.option(pane, '@agent_stamped_at')).not.toBe(before);
  });

  it('a malformed frame to a live collector gets NAK and changes nothing', async () => {
    const { pane, env } = await setUp(true);
    const path = wakeSocketPath(canonicalSocketPath(scratch!.socketPath()), wakeDir(env));
    const before = scratch!.option(pane, '@agent_state');
    expect([...(await exchange(path, `${EVENT_MAGIC}{"agent":"claude","kind":"UserPromptSubmit"}\n`)).reply]).toEqual([NAK]);
    expect([...(await exchange(path, `${EVENT_MAGIC}not json\n`)).reply]).toEqual([NAK]);
    expect(scratch!.option(pane, '@agent_state')).toBe(before);
    expect(before).not.toBe('working');
  });

  it('with no collector running, the hook still stamps, through `tma event`', async () => {
    const { pane, env, log } = await setUp(false);
    expect(await run(HOOK, ['claude', 'UserPromptSubmit'], env, '{"session_id":"slow-1"}')).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(scratch!.option(pane, '@agent_state')).toBe('working');
    expect(scratch!.option(pane, '@agent_source')).toBe('hook');
    expect(scratch!.option(pane, '@agent_session')).toBe('slow-1');
    expect(readFileSync(log, 'utf8')).toBe(`event --agent claude --kind UserPromptSubmit --socket-name ${scratch!.name} --payload -\n`);
  });
});
