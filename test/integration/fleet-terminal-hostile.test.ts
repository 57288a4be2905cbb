// A hostile host's text (row fields, its hello's collector_version) goes through a real hub to
// `tma --hub … <verb>`: no byte a terminal would act on may reach stdout or stderr.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeCollector, protoRow, until } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';
import { tma } from '../support/scratch-tmux.js';

const ENV = { TMA_HUB: '', TMA_HUB_TOKEN: '', TMA_LOG_LEVEL: '', TMA_DEBUG: '' };
const EVIL = 'a\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\r\x9b31m\u202eb';
// C0 but newline and tab (the text form's column separator; a field's own tabs are escaped), DEL, C1, bidi controls.
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

let hub: TestHub;
let dir: string;
let c: FakeCollector;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-hostile-term-'));
  writeFileSync(join(dir, 'viewer.token'), TOKENS.viewer, { mode: 0o600 });
  writeFileSync(join(dir, 'operator.token'), TOKENS.operator, { mode: 0o600 });
  hub = await startTestHub();
  c = await FakeCollector.connect(hub.url, TOKENS.build1);
  c.hello('build1', undefined, undefined, { collector_version: `0.1${EVIL}` });
  await c.next((f) => f.type === 'welcome');
  c.snapshot(1, [
    protoRow({
      pane: '%1',
      agent: 'claude',
      state: 'blocked',
      detail: EVIL,
      locator: `s${EVIL}`,
      repo: EVIL,
      branch: EVIL,
      pending_summary: `${EVIL}${'y'.repeat(900)}`,
    } as never),
  ]);
  await until(async () => (((await (await hub.get('/v1/agents')).json()) as { agents: unknown[] }).agents.length === 1 ? true : undefined));
});

afterAll(async () => {
  c?.ws.terminate();
  await hub?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('fleet verbs: hostile host text never reaches a terminal raw', () => {
  const verbs: string[][] = [['ls'], ['ls', '--json'], ['doctor'], ['doctor', '--json'], ['status', '--format', 'plain'], ['status', '--format', 'json']];
  for (const v of verbs)
    it(`tma --hub … ${v.join(' ')}`, async () => {
      const r = await tma(['--hub', hub.url, '--token-file', join(dir, 'viewer.token'), ...v], { env: ENV });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.length).toBeGreaterThan(0);
      expect(RAW.exec(r.stdout), JSON.stringify(r.stdout)).toBeNull();
      expect(RAW.exec(r.stderr), JSON.stringify(r.stderr)).toBeNull();
      if (v.includes('--json')) for (const l of r.stdout.trim().split('\n')) expect(() => JSON.parse(l)).not.toThrow();
    });
});

// Verbs whose exit code says something about the fleet (a refusal, a timeout, no match): only
// what reaches the terminal is checked here, and that something was printed.
describe('fleet verbs that may exit non-zero: hostile host text never reaches a terminal raw', () => {
  const verbs: [string, string[]][] = [
    ['viewer', ['act', '--list']],
    ['viewer', ['act', '--list', '--host', 'build1', '--pane', '%1']],
    ['operator', ['act', 'approve', '--host', 'build1', '--pane', '%1', '--dry-run']],
    ['operator', ['act', 'approve', '--host', 'build1', '--pane', '%1', '--yes']],
    ['operator', ['mute', '--host', 'build1', '--pane', '%1', '--for', '1m']],
    ['viewer', ['wait', '--until', 'idle', '--any', '--timeout', '1']],
    ['viewer', ['wait', '--until', 'blocked', '--any', '--timeout', '3']],
  ];
  for (const [who, v] of verbs)
    it(`tma --hub … ${v.join(' ')} (${who})`, async () => {
      const r = await tma(['--hub', hub.url, '--token-file', join(dir, `${who}.token`), ...v], { env: ENV });
      expect(r.stdout.length + r.stderr.length).toBeGreaterThan(0);
      expect(RAW.exec(r.stdout), JSON.stringify(r.stdout)).toBeNull();
      expect(RAW.exec(r.stderr), JSON.stringify(r.stderr)).toBeNull();
    });
});

// A hostile hub: every answer is an error whose text is made to act on a terminal. The verbs relay
// the hub's error text; none of it may arrive raw.
describe('a hostile hub: its error text never reaches a terminal raw', () => {
  const verbs: string[][] = [
    ['ls'],
    ['status', '--format', 'plain'],
    ['doctor'],
    ['act', '--list'],
    ['act', 'approve', '--pane', '%1'],
    ['act', 'approve', '--pane', '%1', '--dry-run'],
    ['mute', '--pane', '%1'],
    ['wait', '--until', 'idle', '--any', '--timeout', '1'],
  ];
  for (const v of verbs)
    it(`tma --hub <hostile> ${v.join(' ')}`, async () => {
      const { createServer } = await import('node:http');
      const evil = createServer((_req, res) => res.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ schema: 1, error: EVIL })));
      await new Promise<void>((ok) => evil.listen(0, '127.0.0.1', ok));
      try {
        const url = `http://127.0.0.1:${(evil.address() as { port: number }).port}`;
        const r = await tma(['--hub', url, '--token-file', join(dir, 'operator.token'), ...v], { env: ENV });
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain('\\x1b');
        expect(RAW.exec(r.stdout), JSON.stringify(r.stdout)).toBeNull();
        expect(RAW.exec(r.stderr), JSON.stringify(r.stderr)).toBeNull();
      } finally {
        evil.closeAllConnections();
        await new Promise((ok) => evil.close(ok));
      }
    });
});
