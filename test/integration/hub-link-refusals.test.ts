// Refusals a retry cannot fix, against a real hub: a collector under the wrong host name and a
// second collector for a host that already has a live link. Neither may turn into a redial loop
// or two links taking turns.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { FleetDocument } from '../../shared/fleet.js';
import { FakeCollector, EPOCH_B, protoRow, until } from '../support/hub-fake-collector.js';
import { HB_MS, TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';
import { REPO } from '../support/scratch-tmux.js';

let hub: TestHub | null = null;
let child: ChildProcess | null = null;
const fakes: FakeCollector[] = [];
let dir = '';

afterEach(async () => {
  child?.kill('SIGKILL');
  child = null;
  for (const f of fakes.splice(0)) f.ws.terminate();
  await hub?.close();
  hub = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const hosts = async (h: TestHub) => ((await (await h.get('/v1/agents')).json()) as FleetDocument).hosts;

it('a collector under the wrong host name is refused once, backs off for minutes, and the host says why', async () => {
  hub = await startTestHub();
  dir = mkdtempSync(join(tmpdir(), 'tma-refusals-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKENS.build1}\n`);
  let stderr = '';
  child = spawn(
    process.execPath,
    [
      join(REPO, 'bin/tma.js'),
      'collector',
      '--hub',
      hub.url.replace(/^http/, 'ws'),
      '--token-file',
      tokenFile,
      '--socket-name',
      'tma-none-such',
      '--host-name',
      'not-build1',
    ],
    { env: { ...process.env, TMUX: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr!.on('data', (d) => (stderr += d));
  const h = hub;
  const refusals = () => h.logLines.filter((l) => l.includes('host-mismatch')).length;
  await until(() => (refusals() >= 1 ? true : undefined), 15_000);
  // Four seconds is eight redials of the old loop; now there is none.
  await new Promise((r) => setTimeout(r, 4000));
  expect(refusals()).toBe(1);
  expect(stderr.match(/refused this collector/g)).toHaveLength(1);
  expect(stderr).toMatch(/host-mismatch/);
  const b1 = (await hosts(h)).find((x) => x.host === 'build1')!;
  expect(b1.reachable).toBe(false);
  expect(b1.last_refusal?.reason).toMatch(/publishes for host build1, not not-build1/);
  expect(b1.last_refusal?.at_ms).toBeGreaterThan(0);
}, 30_000);

it('a second collector for a host with a live link is refused with a clear reason; the first keeps its link', async () => {
  hub = await startTestHub();
  const first = await FakeCollector.connect(hub.url, TOKENS.build1);
  fakes.push(first);
  first.hello('build1');
  await first.next((f) => f.type === 'welcome');
  first.snapshot(1, [protoRow({ pane: '%1' })]);
  // The first collector is healthy: it keeps talking.
  const beat = setInterval(() => first.heartbeat(Date.now(), 1), HB_MS / 2);
  try {
    for (let i = 0; i < 3; i++) {
      const second = await FakeCollector.connect(hub.url, TOKENS.build1);
      fakes.push(second);
      second.hello('build1', EPOCH_B);
      const err = await second.next((f) => f.type === 'error');
      expect(err).toMatchObject({ code: 'host-busy' });
      expect(String(err.message)).toMatch(/already publishes for build1/);
      await second.closed();
    }
    await new Promise((r) => setTimeout(r, HB_MS * 2));
    expect(first.closeCode).toBeNull();
    const b1 = (await hosts(hub)).find((x) => x.host === 'build1')!;
    expect(b1).toMatchObject({ reachable: true });
    expect(b1.last_refusal?.reason).toMatch(/already publishes/);
  } finally {
    clearInterval(beat);
  }
  // Once the first link goes quiet, a newcomer may take over (a restarted collector is not locked out).
  await new Promise((r) => setTimeout(r, HB_MS * 2));
  const third = await FakeCollector.connect(hub.url, TOKENS.build1);
  fakes.push(third);
  third.hello('build1', EPOCH_B);
  await third.next((f) => f.type === 'welcome');
  await first.closed(5000);
});
