// What a person sees when something goes wrong: a user mistake is one line on stderr and an exit
// code, never a stack trace; a reader that goes away (`| head -1`) ends `tma` quietly; an
// operator can forget a host; and the long-running verbs log through pino, JSON lines when stderr
// is not a terminal, readable lines when it is, each side saying when its link comes and goes.
// A real hub runs in this process; collectors are the built CLI. Build first.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FleetDocument } from '../../shared/fleet.js';
import { FakeCollector, protoRow } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { REPO, tma, waitFor, type CliResult } from '../support/scratch-tmux.js';

const TMA = join(REPO, 'bin/tma.js');
// A client environment that knows no hub and no token unless a test gives one.
const ENV = { TMA_HUB: '', TMA_HUB_TOKEN: '', TMA_LOG_LEVEL: '', TMA_DEBUG: '' };

let dir: string;
const tokenFile = (name: keyof typeof TOKENS) => join(dir, `${name}.token`);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tma-cli-mistakes-'));
  for (const name of Object.keys(TOKENS) as (keyof typeof TOKENS)[]) writeFileSync(tokenFile(name), `${TOKENS[name]}\n`, { mode: 0o600 }); // private, as a real token file is
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One line on stderr, starting `tma: `, and nothing that looks like a stack frame. */
function oneLine(r: CliResult): string {
  expect(r.stderr, r.stderr).toMatch(/^tma: [^\n]+\n$/);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  return r.stderr;
}

async function agents(hub: TestHub, token: string = TOKENS.viewer): Promise<FleetDocument> {
  return (await (await hub.get('/v1/agents', token)).json()) as FleetDocument;
}

describe('user mistakes', () => {
  let hub: TestHub;
  let fake: FakeCollector;
  let beat: NodeJS.Timeout;
  // Few rows with wide lines: enough output to overrun a pipe, little for the hub and CLI to chew.
  const ROWS = 500;

  beforeAll(async () => {
    hub = await startTestHub();
    fake = await FakeCollector.connect(hub.url, TOKENS.build1);
    fake.hello('build1');
    await fake.next((f) => f.type === 'welcome');
    const rows = Array.from({ length: ROWS }, (_, i) => protoRow({ host: 'build1', pane: `%${i}`, state: 'idle', repo: `repository-${'x'.repeat(200)}-${i}` }));
    fake.snapshot(1, rows);
    beat = setInterval(() => fake.heartbeat(Date.now(), 1), 100);
    await waitFor(() => hub.store.document().agents.length === ROWS, 'the rows on the hub');
  });
  afterAll(async () => {
    clearInterval(beat);
    fake?.ws.terminate();
    await hub?.close();
  });

  it('`tma ls | head -1` ends quietly, 20 times out of 20', async () => {
    const args = `--hub ${hub.url} --token-file ${tokenFile('viewer')} ls`;
    // The whole listing is far more than a pipe holds, so `tma` is still writing when head leaves.
    const full = await tma(args.split(' '), { env: ENV });
    expect(full.code).toBe(0);
    expect(full.stdout.length).toBeGreaterThan(2 * 65_536);
    const once = () =>
      new Promise<{ out: string; err: string; code: string }>((done) => {
        const sh = spawn('bash', ['-c', `node ${TMA} ${args} 2>"$ERR" | head -1; echo "\${PIPESTATUS[0]}" >&2; cat "$ERR" >&2`], {
          env: { ...process.env, ...ENV, TMUX: '', ERR: join(dir, `err-${Math.random().toString(36).slice(2)}`) },
        });
        let out = '';
        let err = '';
        sh.stdout.on('data', (d) => (out += d));
        sh.stderr.on('data', (d) => (err += d));
        sh.on('close', () => {
          const [code = '', ...rest] = err.split('\n');
          done({ out, err: rest.join('\n'), code });
        });
      });
    const runs: Awaited<ReturnType<typeof once>>[] = [];
    for (let batch = 0; batch < 5; batch++) runs.push(...(await Promise.all([once(), once(), once(), once()])));
    expect(runs).toHaveLength(20);
    for (const r of runs) {
      expect(r.out.split('\n').filter(Boolean)).toHaveLength(1);
      expect({ code: r.code, stderr: r.err.trim() }).toEqual({ code: '0', stderr: '' });
    }
  }, 120_000);

  it('a missing --token-file: one line, exit 1', async () => {
    const missing = join(dir, 'no-such.token');
    const r = await tma(['--hub', hub.url, '--token-file', missing, 'ls'], { env: ENV });
    expect(r.code).toBe(1);
    expect(oneLine(r)).toContain(`cannot read --token-file ${missing}: ENOENT`);
    expect(r.stdout).toBe('');
  });

  it('`tma collector` with an http:// hub, or a log level that is none: one line, exit 2', async () => {
    const http = await tma(['collector', '--hub', 'http://127.0.0.1:1', '--token-file', tokenFile('build1')], { env: ENV });
    expect(http.code).toBe(2);
    expect(oneLine(http)).toContain('ws://127.0.0.1:1');
    const env = await tma(['collector', '--hub', 'ws://127.0.0.1:1', '--token-file', tokenFile('build1')], { env: { ...ENV, TMA_LOG_LEVEL: 'loud' } });
    expect(env.code).toBe(2);
    expect(oneLine(env)).toContain('TMA_LOG_LEVEL must be one of trace|debug|info|warn|error|fatal|silent');
    const flag = await tma(['hub', '--no-local', '--log-level', 'verbose'], { env: ENV });
    expect(flag.code).toBe(2);
    expect(oneLine(flag)).toContain('--log-level must be one of');
  });

  it('`tma collector` with an unreachable hub keeps trying, one warning line per attempt, no stack', async () => {
    const child = spawn(process.execPath, [TMA, 'collector', '--hub', 'ws://127.0.0.1:1', '--token-file', tokenFile('build1'), '-L', 'tma-none-such'], {
      env: { ...process.env, ...ENV, TMUX: '', XDG_RUNTIME_DIR: join(dir, 'run-unreachable') },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    try {
      const complete = () =>
        err
          .slice(0, err.lastIndexOf('\n') + 1)
          .split('\n')
          .filter(Boolean);
      await waitFor(() => complete().length >= 2, 'two refused attempts logged', 15_000);
      expect(child.exitCode).toBe(null);
      // Each attempt is one warning saying what failed and when the next try is, and nothing else.
      for (const l of complete()) {
        expect(JSON.parse(l)).toMatchObject({
          level: 40,
          msg: expect.stringMatching(/^hub link to ws:\/\/127\.0\.0\.1:1\/v1\/collect failed: connect ECONNREFUSED \S+; reconnecting in \d+ ms$/),
        });
      }
      expect(err).not.toMatch(/^\s+at /m);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('forgetting a host', () => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await startTestHub();
  });
  afterAll(async () => {
    await hub?.close();
  });

  /** A host with two rows whose link stays live (it heartbeats) until `leave`. */
  async function publish(host: 'build1' | 'laptop'): Promise<{ leave(): void }> {
    const c = await FakeCollector.connect(hub.url, TOKENS[host]);
    c.hello(host);
    await c.next((f) => f.type === 'welcome');
    c.snapshot(1, [protoRow({ host, pane: '%1', state: 'idle' }), protoRow({ host, pane: '%2', state: 'blocked' })]);
    const beat = setInterval(() => c.heartbeat(Date.now(), 1), 100);
    await waitFor(() => hub.store.document().agents.filter((r) => r.host === host).length === 2, `${host}'s rows`);
    return {
      leave() {
        clearInterval(beat);
        c.ws.terminate();
      },
    };
  }

  it('over the CLI: an operator removes a host and its rows; a viewer is refused; an unknown host is named', async () => {
    const c = await publish('laptop');
    const forget = (token: keyof typeof TOKENS, host: string) => tma(['--hub', hub.url, '--token-file', tokenFile(token), 'forget', host], { env: ENV });

    // Connected: forgetting would not last, so it is refused.
    const busy = await forget('operator', 'laptop');
    expect(busy.code).toBe(1);
    expect(oneLine(busy)).toContain('laptop is connected right now');

    c.leave();
    await waitFor(() => hub.store.hostStatuses().some((h) => h.host === 'laptop' && !h.reachable), 'laptop down');

    const viewer = await forget('viewer', 'laptop');
    expect(viewer.code).toBe(1);
    expect(oneLine(viewer)).toMatch(/^tma: cannot forget laptop: forgetting a host needs an operator token/);
    expect((await agents(hub)).agents.filter((r) => r.host === 'laptop')).toHaveLength(2);

    const unknown = await forget('operator', 'no-such-host');
    expect(unknown.code).toBe(3);
    expect(oneLine(unknown)).toBe('tma: cannot forget no-such-host: no host no-such-host\n');

    const ok = await forget('operator', 'laptop');
    expect({ code: ok.code, stdout: ok.stdout, stderr: ok.stderr }).toEqual({ code: 0, stdout: 'forgot laptop\n', stderr: '' });
    const doc = await agents(hub);
    expect(doc.agents.filter((r) => r.host === 'laptop')).toEqual([]);
    expect(doc.hosts.map((h) => h.host)).not.toContain('laptop');
    expect(hub.logLines.some((l) => l.includes('host forgotten') && l.includes('"host":"laptop"') && l.includes('"who":"olga"'))).toBe(true);
  });

  it('over HTTP: DELETE /v1/hosts/NAME answers 401, 403, 409, 200 and then 404', async () => {
    const c = await publish('build1');
    const del = (token: string | null) =>
      fetch(`${hub.url}/v1/hosts/build1`, { method: 'DELETE', headers: token === null ? {} : { authorization: `Bearer ${token}` } });
    expect((await del(null)).status).toBe(401);
    const viewer = await del(TOKENS.viewer);
    expect(viewer.status).toBe(403);
    expect(await viewer.json()).toMatchObject({ schema: 1, error: expect.stringContaining('operator') });
    // A collector token is not a client's either.
    expect([401, 403]).toContain((await del(TOKENS.build1)).status);
    expect((await del(TOKENS.operator)).status).toBe(409);
    c.leave();
    await waitFor(() => hub.store.hostStatuses().some((h) => h.host === 'build1' && !h.reachable), 'build1 down');
    const ok = await del(TOKENS.operator);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ schema: 1, forgotten: 'build1' });
    expect((await agents(hub)).agents.filter((r) => r.host === 'build1')).toEqual([]);
    expect((await del(TOKENS.operator)).status).toBe(404);
  });
});

describe('logs of the long-running verbs', () => {
  const children: ChildProcess[] = [];
  let hub: TestHub | null = null;
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await hub?.close();
    hub = null;
  });

  function collector(host: 'build1' | 'laptop', url: string, env: NodeJS.ProcessEnv = {}): { child: ChildProcess; err: () => string } {
    const child = spawn(
      process.execPath,
      [TMA, 'collector', '--hub', url.replace(/^http/, 'ws'), '--token-file', tokenFile(host), '--host-name', host, '-L', `tma-none-${host}`],
      {
        env: { ...process.env, ...ENV, TMUX: '', XDG_RUNTIME_DIR: join(dir, `run-${host}`), XDG_CONFIG_HOME: join(dir, 'cfg'), ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    children.push(child);
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    return { child, err: () => err };
  }
  type Rec = { level: number; msg: string; name: string; time: number };
  const records = (text: string): Rec[] =>
    text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Rec);

  it('JSON lines off a terminal; TMA_LOG_LEVEL=warn hides info; both sides say when the link comes and goes, and why', async () => {
    hub = await startTestHub();
    const port = hub.port;
    const info = collector('build1', hub.url);
    const quiet = collector('laptop', hub.url, { TMA_LOG_LEVEL: 'warn' });
    const h1 = hub;
    const connected = (host: string) => h1.logLines.some((l) => l.includes('collector connected') && l.includes(`"host":"${host}"`));
    await waitFor(() => connected('build1') && connected('laptop'), 'both collectors connected', 20_000);
    await waitFor(() => /hub link up/.test(info.err()), 'the collector saying its link is up', 10_000);
    const up = JSON.parse(h1.logLines.find((l) => l.includes('collector connected') && l.includes('"host":"build1"'))!) as Record<string, unknown>;
    expect(up).toMatchObject({ level: 30, host: 'build1', via: 'ws' });

    // The hub goes away: each collector says its link is down, with the reason.
    await h1.close();
    hub = null;
    await waitFor(() => /hub link down: \S/.test(info.err()) && /hub link down: \S/.test(quiet.err()), 'both collectors noticing', 15_000);
    for (const c of [info, quiet]) {
      const recs = records(c.err());
      expect(recs.length).toBeGreaterThan(0);
      for (const r of recs) expect(r).toMatchObject({ level: expect.any(Number), msg: expect.any(String), name: 'tma-collector', time: expect.any(Number) });
      const down = recs.find((r) => r.msg.startsWith('hub link down: '))!;
      expect(down.level).toBe(40);
      expect(down.msg.length).toBeGreaterThan('hub link down: '.length);
    }
    expect(records(info.err()).some((r) => r.level === 30 && r.msg === 'hub link up')).toBe(true);
    // At warn, no info line at all (not even the link coming up), yet the warning is there.
    expect(records(quiet.err()).filter((r) => r.level < 40)).toEqual([]);

    // A hub on the same port again: the collector comes back; then its link is cut from its side,
    // and the hub says which host went and why.
    hub = await startTestHub({ config: testConfig({ listen: { host: '127.0.0.1', port } }) });
    const h2 = hub;
    await waitFor(() => h2.logLines.some((l) => l.includes('collector connected') && l.includes('"host":"build1"')), 'build1 back', 40_000);
    info.child.kill('SIGTERM');
    await waitFor(() => h2.logLines.some((l) => l.includes('collector disconnected') && l.includes('"host":"build1"')), 'the hub noticing', 10_000);
    const gone = JSON.parse(h2.logLines.find((l) => l.includes('collector disconnected') && l.includes('"host":"build1"'))!) as Record<string, unknown>;
    expect(gone).toMatchObject({ host: 'build1', via: 'ws', reason: expect.stringMatching(/\S/) });
  }, 90_000);

  it('one-shot verbs never load the logger; the long-running ones do', async () => {
    // NODE_DEBUG=module names every CommonJS module loaded, pino and its helpers included.
    const loads = async (args: string[]) => (await tma(args, { env: { ...ENV, NODE_DEBUG: 'module', TMUX_PANE: '' } })).stderr;
    for (const args of [
      ['status', '-L', 'tma-none-such'],
      ['ls', '-L', 'tma-none-such'],
      ['event', '--agent', 'claude', '--kind', 'Stop'],
    ]) {
      expect((await loads(args)).match(/node_modules\/pino[^/]*\//g) ?? [], args.join(' ')).toEqual([]);
    }
    // The check can see pino when it is loaded: a collector stopped by a bad level has loaded it.
    expect(await loads(['collector', '--stdio', '--log-level', 'bad'])).toMatch(/node_modules\/pino\//);
  });

  it('readable lines, not JSON, when stderr is a terminal', () => {
    // script(1) gives the collector a pseudo-terminal; it cannot reach the hub and says so.
    const r = spawnSync(
      'script',
      ['-qefc', `timeout 4 ${process.execPath} ${TMA} collector --hub ws://127.0.0.1:1 --token-file ${tokenFile('build1')} -L tma-none-tty`, '/dev/null'],
      {
        env: { ...process.env, ...ENV, TMUX: '', XDG_RUNTIME_DIR: join(dir, 'run-tty') },
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    const text = r.stdout.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');
    const lines = text.split('\n').filter((l) => l.includes('ECONNREFUSED'));
    expect(lines.length, text).toBeGreaterThan(0);
    expect(lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\] WARN \(tma-collector\): hub link to ws:\/\/127\.0\.0\.1:1\/v1\/collect failed: connect ECONNREFUSED 127\.0\.0\.1:1; reconnecting in \d+ ms$/,
    );
    expect(text).not.toContain('"level"');
  });
});
