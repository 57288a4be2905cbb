// Nothing lost: the hub is killed, a pane becomes blocked, the collector is kill -9ed and started
// again, and the hub comes back. The ring made while the hub was down survives the collector's
// crash in its outbox on disk and reaches the sink exactly once.

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TOKENS } from '../support/hub-harness.js';
import { startHubProcess, type HubProcess } from '../support/hub-process.js';
import { collectorHome, hubRowWhen, loopbackReceiver, sleep, startCollector, type Collector } from '../support/notify-rig.js';
import { freePort } from '../support/ports.js';
import { ScratchTmux, waitFor } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

const cleanup: (() => void | Promise<void>)[] = [];
afterAll(async () => {
  for (const f of cleanup.reverse()) await f();
});

it('a ring made while the hub is down survives a collector kill -9 and arrives once', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tma-notify-outbox-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const rx = await loopbackReceiver();
  cleanup.push(() => rx.close());
  const port = await freePort();
  const toml = [
    '[[collector]]',
    'host = "build1"',
    `token = "${TOKENS.build1}"`,
    '[[client]]',
    'name = "vic"',
    `token = "${TOKENS.viewer}"`,
    'role = "viewer"',
    '[[notify]]',
    'name = "ops"',
    'kind = "webhook"',
    `url = "${rx.url}/hook"`,
    'dwell_secs = 0',
    '',
  ].join('\n');
  let hub: HubProcess = await startHubProcess(dir, port, toml);
  cleanup.push(() => hub.kill());
  const rows = () => fetch(`${hub.url}/v1/agents`, { headers: { authorization: `Bearer ${TOKENS.viewer}` } });

  const scratch = new ScratchTmux('nobx');
  cleanup.push(() => scratch.kill());
  const pane = scratch.start();
  const agent = await scratch.standIn(pane, 'claude', SCREENS.claudeWorking);
  const home = collectorHome(join(dir, 'c'), TOKENS.build1);
  let collector: Collector = startCollector({ hubPort: port, home, socket: scratch.name, host: 'build1' });
  cleanup.push(() => collector.kill());
  await hubRowWhen(rows, (r) => r.pane === pane && r.state === 'working', 'the working row');

  await hub.kill();
  await agent.paint(SCREENS.claudeBlocked);
  const outbox = join(home.env.XDG_STATE_HOME!, 'tma', 'notify-outbox-build1.jsonl');
  await waitFor(() => existsSync(outbox) && readFileSync(outbox, 'utf8').includes('"trigger":"blocked"'), 'the ring in the outbox file', 15_000);
  await collector.kill();
  collector = startCollector({ hubPort: port, home, socket: scratch.name, host: 'build1' });
  await sleep(1500);
  hub = await startHubProcess(dir, port, toml);

  await waitFor(() => rx.hooks().length > 0, 'the push once the hub is back', 60_000);
  await sleep(4000);
  const events = rx.hooks().flatMap((g) => (JSON.parse(g.body) as { events: { pane: string; trigger: string }[] }).events);
  expect(events).toMatchObject([{ pane, trigger: 'blocked' }]);
  expect(rx.hooks()).toHaveLength(1);
});
