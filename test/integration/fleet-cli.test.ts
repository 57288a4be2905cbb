// The fleet CLI's failures, as a script sees them: exit codes and one clear line on stderr. A real
// hub runs in this process; rows come from a protocol-speaking stand-in collector, as no tmux is
// needed to get a verb refused. The CLI must be built first.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetDocument } from '../../shared/fleet.js';
import { FakeCollector, protoRow, SERVER } from '../support/hub-fake-collector.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';
import { tma, waitFor } from '../support/scratch-tmux.js';
import { freePort } from '../support/ports.js';

let hub: TestHub;
let dir: string;
const collectors: FakeCollector[] = [];
const EPOCHS = { build1: '0123456789abcdef', laptop: 'fedcba9876543210' } as const;

// A client environment that knows no hub and no token unless a test gives one.
const ENV = { TMA_HUB: '', TMA_HUB_TOKEN: '' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-fleet-cli-'));
  writeFileSync(join(dir, 'viewer.token'), `${TOKENS.viewer}\n`);
  writeFileSync(join(dir, 'wrong.token'), 'tok-nobody-knows-this\n');
  hub = await startTestHub();
  for (const host of ['build1', 'laptop'] as const) {
    const c = await FakeCollector.connect(hub.url, TOKENS[host]);
    collectors.push(c);
    c.hello(host, EPOCHS[host]);
    await c.next((f) => f.type === 'welcome');
    c.snapshot(1, [protoRow({ host, pane: '%1', state: 'idle' })], { epoch: EPOCHS[host] });
  }
  await waitFor(() => hub.store.document().agents.length === 2, 'both fake hosts published');
});

afterAll(async () => {
  for (const c of collectors) c.ws.terminate();
  await hub?.close();
  rmSync(dir, { recursive: true, force: true });
});

const viewer = () => ['--hub', hub.url, '--token-file', join(dir, 'viewer.token')];

describe('fleet CLI errors', () => {
  it('a token the hub does not know: exit 1 and a message naming the refusal', async () => {
    for (const verb of [['ls'], ['status'], ['wait', '--until', 'idle', '--all', '--timeout', '0']]) {
      const r = await tma(['--hub', hub.url, '--token-file', join(dir, 'wrong.token'), ...verb], { env: ENV });
      expect(r.code, verb[0]).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^tma: the hub refused the token \(401: unknown token\); pass --token-file or set TMA_HUB_TOKEN\n$/);
      // The token itself is never echoed back.
      expect(r.stderr).not.toContain('nobody-knows');
    }
    // The same through the environment: TMA_HUB and a wrong TMA_HUB_TOKEN.
    const env = await tma(['ls'], { env: { TMA_HUB: hub.url, TMA_HUB_TOKEN: 'tok-also-wrong' } });
    expect(env.code).toBe(1);
    expect(env.stderr).toContain('refused the token (401');
    // No token at all is refused just as clearly.
    const none = await tma(['--hub', hub.url, 'ls'], { env: ENV });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('refused the token (401: missing bearer token)');
    // And the right one works: the refusal above is about the token, not the hub.
    const ok = await tma([...viewer(), 'ls'], { env: ENV });
    expect(ok.code).toBe(0);
    expect(ok.stdout.split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('a hub that is down: exit 1 and "unreachable"', async () => {
    const port = await freePort();
    for (const verb of [['ls'], ['status'], ['subscribe', '--json'], ['wait', '--until', 'idle', '--any']]) {
      const r = await tma(['--hub', `http://127.0.0.1:${port}`, '--token-file', join(dir, 'viewer.token'), ...verb], { env: ENV });
      expect(r.code, verb[0]).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`tma: hub http://127.0.0.1:${port} unreachable: ECONNREFUSED\n`);
    }
  });

  it('--host without --hub is a usage error (2); with --hub it selects that host', async () => {
    for (const verb of [['ls'], ['status'], ['wait', '--until', 'idle', '--any', '--timeout', '0']]) {
      const r = await tma([...verb, '--host', 'build1'], { env: { ...ENV, TMUX: '' } });
      expect(r.code, verb[0]).toBe(2);
      expect(r.stderr).toBe('tma: --host needs --hub\n');
    }
    const r = await tma([...viewer(), 'ls', '--json', '--host', 'build1'], { env: ENV });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as FleetDocument;
    expect(doc.agents.map((a) => [a.host, a.server, a.pane])).toEqual([['build1', SERVER, '%1']]);
    // TMA_HUB counts as --hub.
    const viaEnv = await tma(['ls', '--host', 'laptop'], { env: { TMA_HUB: hub.url, TMA_HUB_TOKEN: TOKENS.viewer } });
    expect(viaEnv.code).toBe(0);
    expect(viaEnv.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(viaEnv.stdout).toContain('laptop');
  });
});

describe('what a blocked pane asks, in the fleet CLI', () => {
  it('ls ends each line with it, or says the host does not share it; never a bare "permission"', async () => {
    const fresh: FakeCollector[] = [];
    try {
      for (const host of ['build1', 'laptop'] as const) {
        const c = await FakeCollector.connect(hub.url, TOKENS[host]);
        fresh.push(c);
        // build1 keeps what its prompts ask; laptop shares it (the default).
        c.hello(host, `${EPOCHS[host].slice(0, 8)}00000000`, undefined, { share_prompt: host === 'laptop' });
        await c.next((f) => f.type === 'welcome');
        c.snapshot(
          1,
          [
            protoRow({
              host,
              pane: '%1',
              state: 'blocked',
              detail: 'permission',
              pending_tool: 'Bash',
              pending_summary: host === 'laptop' ? 'Bash: rm -rf build/' : null,
            }),
          ],
          {
            epoch: `${EPOCHS[host].slice(0, 8)}00000000`,
          },
        );
      }
      await waitFor(() => hub.store.document().agents.filter((a) => a.state === 'blocked').length === 2, 'both panes blocked');
      const r = await tma([...viewer(), 'ls'], { env: ENV });
      expect(r.code).toBe(0);
      const asks = Object.fromEntries(
        r.stdout
          .trim()
          .split('\n')
          .map((l) => [l.split('\t')[0], l.split('\t')[13]]),
      );
      expect(asks).toEqual({ build1: 'not shared by this host', laptop: 'Bash: rm -rf build/' });
      const doc = JSON.parse((await tma([...viewer(), 'ls', '--json'], { env: ENV })).stdout) as FleetDocument;
      expect(Object.fromEntries(doc.hosts.map((h) => [h.host, h.shares_prompt]))).toEqual({ build1: false, laptop: true });
    } finally {
      for (const c of fresh) c.ws.terminate();
    }
  });
});
