// A hostile host's text (row fields, its hello's collector_version, what it answers an act, a mute
// or a dry run with) goes through a real hub to `tma --hub … <verb>`; and a hub that lies answers
// every verb with documents made to act on a terminal. No byte a terminal would act on may reach
// stdout or stderr, in any fleet verb (the coverage table, test/support/hostile-text.ts, names them).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeCollector, protoRow, SERVER, until } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';
import { EVIL, EVIL_RAW_PARTS, onTerminal, RAW, verbsCovered } from '../support/hostile-text.js';
import { tma, type CliResult } from '../support/scratch-tmux.js';

let ENV: NodeJS.ProcessEnv;
let hub: TestHub;
let dir: string;
let c: FakeCollector;
let beat: NodeJS.Timeout;

/** The fake collector answers every act, mute and dry run its hub relays, each answer hostile. */
function answerHostile(fc: FakeCollector): void {
  fc.ws.on('message', (data) => {
    const f = JSON.parse(String(data)) as { type: string; id: string; pane: string; server: string };
    const where = { host: `build1${EVIL}`, server: `${f.server}${EVIL}`, pane: `${f.pane}${EVIL}` };
    if (f.type === 'act')
      fc.send({
        type: 'act_result',
        id: f.id,
        result: { schema: 1, action: `approve${EVIL}`, outcome: 'refused', exit_code: 1, reason: EVIL, ...where },
      });
    else if (f.type === 'mute')
      fc.send({ type: 'mute_result', id: f.id, result: { schema: 1, outcome: 'refused', exit_code: 1, reason: EVIL, until_ms: null, ...where } });
    else if (f.type === 'preview')
      fc.send({
        type: 'preview_result',
        id: f.id,
        result: {
          schema: 1,
          ...where,
          found: true,
          agent: `claude${EVIL}`,
          state: 'blocked',
          prompt_id: null,
          pending_summary: EVIL,
          actions: [
            { name: 'approve', fireable: false, reason: EVIL, lane: 'keys', keys: [EVIL] },
            { name: 'deny', fireable: true, reason: null, lane: 'keys', keys: [EVIL] },
          ],
        },
      });
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hostile-term-'));
  writeFileSync(join(dir, 'viewer.token'), TOKENS.viewer, { mode: 0o600 });
  writeFileSync(join(dir, 'operator.token'), TOKENS.operator, { mode: 0o600 });
  // jump prints the ssh command it would run when there is no terminal to run it on.
  writeFileSync(join(dir, 'config.toml'), '[hosts.build1]\nssh = "u@build1"\n');
  ENV = { TMA_HUB: '', TMA_HUB_TOKEN: '', TMA_LOG_LEVEL: '', TMA_DEBUG: '', TMA_CONFIG: join(dir, 'config.toml') };
  hub = await startTestHub();
  c = await FakeCollector.connect(hub.url, TOKENS.build1);
  answerHostile(c);
  c.hello('build1', undefined, undefined, { collector_version: `0.1${EVIL}`, remote_verbs: ['mute', 'preview'] });
  await c.next((f) => f.type === 'welcome');
  c.snapshot(1, [
    protoRow({
      pane: '%1',
      agent: 'claude',
      state: 'blocked',
      detail: EVIL,
      locator: `s${EVIL}:0.0`,
      repo: EVIL,
      branch: EVIL,
      pending_summary: `${EVIL}${'y'.repeat(900)}`,
    } as never),
    // A locator jump can parse (no CR): its ssh command line is printed when there is no terminal.
    protoRow({ pane: '%2', agent: 'claude', state: 'idle', locator: `s\x1b]0;pwned\x07\u009b31m\u202e:0.0` } as never),
  ]);
  // Heard from, so the hub relays acts, mutes and dry runs to it instead of refusing them.
  beat = setInterval(() => c.heartbeat(), 100);
  await until(async () => (((await (await hub.get('/v1/agents')).json()) as { agents: unknown[] }).agents.length === 2 ? true : undefined));
});

afterAll(async () => {
  clearInterval(beat);
  c?.ws.terminate();
  await hub?.close();
  rmSync(dir, { recursive: true, force: true });
});

const clean = (r: CliResult) => {
  expect(RAW.exec(r.stdout), JSON.stringify(r.stdout)).toBeNull();
  expect(RAW.exec(r.stderr), JSON.stringify(r.stderr)).toBeNull();
};
/** The hostile fields did arrive, shown escaped: a verb that printed none of them proves nothing. */
const shown = (r: CliResult) => expect(r.stdout + r.stderr, 'the hostile fields, escaped').toMatch(/\\(x1b|u001b|u202e)/);
// The forms here that print no host field: the hub's list of hosts' allowed actions, a refusal to run.
const NO_FIELDS = new Set(['act --list', 'act --list --json', 'act --menu --host build1 --pane %1']);
const asJson = (v: string[], r: CliResult) => {
  if (v.includes('--json') && r.stdout.trim()) for (const l of r.stdout.trim().split('\n')) expect(() => JSON.parse(l), l).not.toThrow();
};
const fleet = (url: string, who: string, v: string[], timeoutMs?: number) =>
  tma(['--hub', url, '--token-file', join(dir, `${who}.token`), ...v], { env: ENV, timeoutMs });

const verbs0: string[][] = [['ls'], ['ls', '--json'], ['doctor'], ['doctor', '--json'], ['status', '--format', 'plain'], ['status', '--format', 'json']];

describe('fleet verbs: hostile host text never reaches a terminal raw', () => {
  for (const v of verbs0)
    it(`tma --hub … ${v.join(' ')}`, async () => {
      const r = await fleet(hub.url, 'viewer', v);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.length).toBeGreaterThan(0);
      clean(r);
      asJson(v, r);
    });
});

// Verbs whose exit code says something about the fleet (a refusal, a timeout, no match), and the
// streams, ended by the test: only what reaches the terminal is checked, and that something did.
const MAY_FAIL: [string, string[], number?][] = [
  ['viewer', ['act', '--list']],
  ['viewer', ['act', '--list', '--json']],
  ['viewer', ['act', '--list', '--host', 'build1', '--pane', '%1']],
  ['viewer', ['act', '--list', '--host', 'build1', '--pane', '%1', '--json']],
  ['operator', ['act', 'approve', '--host', 'build1', '--pane', '%1', '--dry-run']],
  ['operator', ['act', 'approve', '--host', 'build1', '--pane', '%1', '--dry-run', '--json']],
  ['operator', ['act', 'approve', '--state', 'blocked', '--all', '--dry-run']],
  ['operator', ['act', 'approve', '--host', 'build1', '--pane', '%1']],
  ['operator', ['act', 'approve', '--host', 'build1', '--pane', '%1', '--json']],
  ['operator', ['act', '--menu', '--host', 'build1', '--pane', '%1']],
  ['operator', ['mute', '--host', 'build1', '--pane', '%1', '--for', '1m']],
  ['viewer', ['wait', '--until', 'idle', '--any', '--timeout', '1']],
  ['viewer', ['wait', '--until', 'blocked', '--any', '--timeout', '3']],
  ['viewer', ['wait', '--until', 'blocked', '--any', '--timeout', '3', '--json']],
  ['viewer', ['jump', '--host', 'build1', '--pane', '%1']],
  ['viewer', ['jump', '--host', 'build1', '--pane', '%2']],
  ['viewer', ['subscribe'], 5000],
  ['viewer', ['subscribe', '--json', '--interval', '1'], 5000],
  ['viewer', ['subscribe', '--json', '--events'], 5000],
];

describe('fleet verbs that may exit non-zero: hostile host text never reaches a terminal raw', () => {
  for (const [who, v, ms] of MAY_FAIL)
    it(`tma --hub … ${v.join(' ')} (${who})`, async () => {
      const r = await fleet(hub.url, who, v, ms);
      expect(r.stdout.length + r.stderr.length).toBeGreaterThan(0);
      clean(r);
      if (!NO_FIELDS.has(v.join(' '))) shown(r);
      asJson(v, r);
    });
});

// The forms that need a terminal: the ls table and the views. They paint their own escapes, so what
// must not arrive is any piece of a hostile field raw; and the hostile row must have been painted.
const ON_TERMINAL: string[][] = [['ls'], ['watch'], ['watch', '--table'], ['pick'], ['act', '--menu', '--host', 'build1', '--pane', '%1']];

describe('fleet views on a terminal: hostile host text shown, never obeyed', () => {
  for (const v of ON_TERMINAL)
    it(`tma --hub … ${v.join(' ')} on a terminal`, async () => {
      const r = await onTerminal(['--hub', hub.url, '--token-file', join(dir, 'viewer.token'), ...v], ENV, 5);
      expect(r.stdout, 'the hostile row was painted, escaped').toMatch(/\\x1b|\\u202e/);
      for (const part of EVIL_RAW_PARTS) expect(r.stdout.includes(part), JSON.stringify(part)).toBe(false);
    });
});

// A hostile hub: every answer is an error whose text is made to act on a terminal. The verbs relay
// the hub's error text; none of it may arrive raw.
const HUB_ERRORS: string[][] = [
  ['ls'],
  ['status', '--format', 'plain'],
  ['doctor'],
  ['act', '--list'],
  ['act', 'approve', '--pane', '%1'],
  ['act', 'approve', '--pane', '%1', '--dry-run'],
  ['act', '--menu', '--pane', '%1'],
  ['mute', '--pane', '%1'],
  ['wait', '--until', 'idle', '--any', '--timeout', '1'],
  ['subscribe'],
  ['subscribe', '--json'],
  ['jump', '--pane', '%1'],
  ['forget', 'build1'],
];

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; close(): Promise<void> }> {
  const s: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(s.address() as { port: number }).port}`,
    close: async () => {
      s.closeAllConnections();
      await new Promise((ok) => s.close(ok));
    },
  };
}

describe('a hostile hub: its error text never reaches a terminal raw', () => {
  for (const v of HUB_ERRORS)
    it(`tma --hub <hostile> ${v.join(' ')}`, async () => {
      const evil = await serve((_req, res) => res.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ schema: 1, error: EVIL })));
      try {
        const r = await fleet(evil.url, 'operator', v);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain('\\x1b');
        clean(r);
      } finally {
        await evil.close();
      }
    });
});

/** What a lying hub answers: the real hub's documents with every free-text field made hostile. */
async function lyingAnswers(): Promise<Record<string, unknown>> {
  const real = (await (await hub.get('/v1/agents')).json()) as { hosts: Record<string, unknown>[]; agents: Record<string, unknown>[] };
  const host = `build1${EVIL}`;
  const hosts = real.hosts.map((h) => ({
    ...h,
    host,
    reason: EVIL,
    reachable: true,
    stale: false,
    last_refusal: { reason: EVIL, at_ms: Date.now() },
    collector_version: EVIL,
  }));
  const agents = real.agents.map((a) => ({
    ...a,
    host,
    stale: false,
    server: `${SERVER}${EVIL}`,
    locator: `s${EVIL}:0.0`,
    detail: EVIL,
    repo: EVIL,
    branch: EVIL,
    pending_summary: EVIL,
  }));
  const doc = { ...real, hosts, agents };
  const edge = {
    at_ms: Date.now(),
    host,
    server: SERVER,
    pane: '%1',
    agent: `claude${EVIL}`,
    from: 'working',
    to: 'blocked',
    detail: EVIL,
    locator: `s${EVIL}`,
  };
  const where = { host, server: `${SERVER}${EVIL}`, pane: `%1${EVIL}` };
  return {
    '/v1/agents': doc,
    '/v1/notifications': { schema: 1, notifications: [{ host, delivery: { [`ntfy${EVIL}`]: { state: 'failed', last_error: EVIL, at_ms: Date.now() } } }] },
    '/v1/subscribe': [doc, edge],
    '/v1/preview': {
      schema: 1,
      ...where,
      found: true,
      agent: EVIL,
      state: 'blocked',
      prompt_id: null,
      pending_summary: EVIL,
      actions: [{ name: 'approve', fireable: false, reason: EVIL, lane: 'keys', keys: [EVIL] }],
    },
    '/v1/act': { schema: 1, action: EVIL, outcome: 'refused', exit_code: 1, reason: EVIL, ...where },
    '/v1/mute': { schema: 1, outcome: 'refused', exit_code: 1, reason: EVIL, until_ms: null, ...where },
  };
}

const LYING: [string[], number?][] = [
  [['ls']],
  [['ls', '--json']],
  [['status', '--format', 'plain']],
  [['status', '--format', 'prom']],
  [['doctor']],
  [['doctor', '--json']],
  [['wait', '--until', 'blocked', '--any', '--timeout', '2']],
  [['wait', '--until', 'blocked', '--any', '--timeout', '2', '--json']],
  [['subscribe'], 3000],
  [['subscribe', '--json'], 3000],
  [['subscribe', '--json', '--events'], 3000],
  [['act', '--list']],
  [['act', '--list', '--pane', '%1']],
  [['act', 'approve', '--pane', '%1', '--dry-run']],
  [['act', 'approve', '--pane', '%1', '--dry-run', '--json']],
  [['act', 'approve', '--pane', '%1']],
  [['act', 'approve', '--pane', '%1', '--json']],
  [['act', '--menu', '--pane', '%1']],
  [['mute', '--pane', '%1', '--for', '1m']],
  [['jump', '--pane', '%1']],
  [['forget', 'build1']],
];

// A hub that lies: answers are well-formed, with host names, reasons, versions, sink errors, what a
// prompt asks and what an act came to all made to act on a terminal (a forged row, a hostile hub).
describe('a lying hub: its documents never reach a terminal raw', () => {
  let liar: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    const answers = await lyingAnswers();
    liar = await serve((req, res, _body) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const a = answers[path];
      if (path === '/v1/subscribe') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const d of a as unknown[]) res.write(`data: ${JSON.stringify(d)}\n\n`);
        // A payload that is not JSON at all, raw escapes in it: it must not be echoed raw either.
        res.end(`data: ${EVIL}\n\n`);
        return;
      }
      if (a === undefined) res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ schema: 1, error: EVIL }));
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(a));
    });
  });
  afterAll(async () => liar?.close());

  for (const [v, ms] of LYING)
    it(`tma --hub <lying> ${v.join(' ')}`, async () => {
      const r = await fleet(liar.url, 'operator', v, ms);
      expect(r.stdout.length + r.stderr.length).toBeGreaterThan(0);
      clean(r);
      if (!v.includes('status')) shown(r);
      asJson(v, r);
    });

  // The liar's host is not called build1: the menu picks the pane by id alone.
  for (const v of [...ON_TERMINAL.slice(0, -1), ['act', '--menu', '--pane', '%1']])
    it(`tma --hub <lying> ${v.join(' ')} on a terminal`, async () => {
      const r = await onTerminal(['--hub', liar.url, '--token-file', join(dir, 'viewer.token'), ...v], ENV, 5);
      expect(r.stdout, 'the hostile row was painted, escaped').toMatch(/\\x1b|\\u202e/);
      for (const part of EVIL_RAW_PARTS) expect(r.stdout.includes(part), JSON.stringify(part)).toBe(false);
    });
});

describe('coverage', () => {
  it('every verb the coverage table names for the fleet has a case here', () => {
    const here = new Set([
      ...verbs0.map((v) => v[0]),
      ...MAY_FAIL.map(([, v]) => v[0]),
      ...ON_TERMINAL.map((v) => v[0]),
      ...HUB_ERRORS.map((v) => v[0]),
      ...LYING.map(([v]) => v[0]),
    ]);
    expect(verbsCovered('fleet').filter((v) => !here.has(v))).toEqual([]);
  });
});
