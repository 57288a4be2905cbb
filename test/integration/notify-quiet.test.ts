// Notifications that keep quiet when they should, with a real collector and hub and a loopback
// receiver: a prompt answered at the terminal within the dwell sends nothing (and is counted), a
// pane whose client is attached and typing sends nothing while the same pane with nobody looking
// sends one, and a collector reconnecting with ten panes still blocked from before the cut sends
// nothing new (the ten went out as one grouped message when they first blocked).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { NotifySinkConfig } from '../../hub/notify/sink-config.js';
import { TOKENS, sample, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { collectorHome, hubRowWhen, loopbackReceiver, sleep, startCollector, type Collector, type Receiver } from '../support/notify-rig.js';
import { ScratchTmux, waitFor } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function sink(rx: Receiver, over: Partial<NotifySinkConfig>): NotifySinkConfig {
  return {
    name: 'phone',
    kind: 'webhook',
    url: `${rx.url}/hook`,
    command: null,
    secret: null,
    on: ['blocked'],
    hosts: null,
    pageUrl: null,
    dwellMs: 0,
    cooldownMs: 0,
    whenLooking: 'skip',
    ...over,
  };
}

async function rig(
  over: Partial<NotifySinkConfig>,
  name: string,
  viaProxy = false,
): Promise<{ rx: Receiver; hub: TestHub; scratch: ScratchTmux; start: () => Collector; proxy: TcpProxy | null }> {
  const dir = mkdtempSync(join(tmpdir(), `tma-${name}-`));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const rx = await loopbackReceiver();
  cleanup.push(() => rx.close());
  const hub = await startTestHub({ config: testConfig({ notify: [sink(rx, over)] }), notifyJournal: join(dir, 'hub', 'hub-notifications.jsonl') });
  cleanup.push(() => hub.close());
  const scratch = new ScratchTmux(name);
  cleanup.push(() => scratch.kill());
  const proxy = viaProxy ? await startTcpProxy({ host: '127.0.0.1', port: hub.port }) : null;
  if (proxy) cleanup.push(() => proxy.close());
  return {
    rx,
    hub,
    scratch,
    proxy,
    start(): Collector {
      const c = startCollector({ hubPort: proxy?.port ?? hub.port, home: collectorHome(join(dir, 'c'), TOKENS.build1), socket: scratch.name, host: 'build1' });
      cleanup.push(() => c.kill());
      return c;
    },
  };
}

const events = (rx: Receiver) => rx.hooks().flatMap((g) => (JSON.parse(g.body) as { events: { pane: string; trigger: string }[] }).events);

it('drops a prompt answered at the terminal 1.5 s after it appeared (dwell 5 s), and counts it', { timeout: 60_000 }, async () => {
  const r = await rig({ dwellMs: 5000 }, 'nqdw');
  const pane = r.scratch.start();
  const agent = await r.scratch.standIn(pane, 'claude', SCREENS.claudeWorking, { afterKey: { fixture: SCREENS.claudeWorking, delayMs: 0 } });
  r.start();
  await hubRowWhen(
    () => r.hub.get('/v1/agents'),
    (x) => x.pane === pane && x.state === 'working',
    'the working row',
  );
  await agent.paint(SCREENS.claudeBlocked);
  await hubRowWhen(
    () => r.hub.get('/v1/agents'),
    (x) => x.pane === pane && x.state === 'blocked',
    'the blocked row',
  );
  await sleep(1500);
  r.scratch.tmux('send-keys', '-t', pane, '1');
  await hubRowWhen(
    () => r.hub.get('/v1/agents'),
    (x) => x.pane === pane && x.state !== 'blocked',
    'the answered row',
  );
  await sleep(6000);
  expect(rx(r)).toHaveLength(0);
  const m = await r.hub.metricsText();
  expect(sample(m, 'tma_hub_notify_skipped_total{sink="phone",reason="answered"}')).toBe(1);
  expect(sample(m, 'tma_hub_notify_sent_total{sink="phone"}')).toBe(0);
});
const rx = (r: { rx: Receiver }) => r.rx.hooks();

it('sends nothing for a pane whose attached client is typing; the same pane with nobody looking sends one', { timeout: 60_000 }, async () => {
  const r = await rig({}, 'nqlk');
  const pane = r.scratch.start();
  const agent = await r.scratch.standIn(pane, 'claude', SCREENS.claudeWorking);
  r.start();
  await hubRowWhen(
    () => r.hub.get('/v1/agents'),
    (x) => x.pane === pane && x.state === 'working',
    'the working row',
  );

  // A person at that pane: a real client on a pty, typing.
  const client: ChildProcess = spawn('script', ['-qfc', `tmux -L ${r.scratch.name} attach -t main`, '/dev/null'], {
    stdio: ['pipe', 'ignore', 'ignore'],
    env: { ...process.env, TMUX: '', TERM: 'xterm' },
  });
  cleanup.push(() => void client.kill('SIGKILL'));
  await waitFor(() => r.scratch.tmux('list-clients', '-F', '#{client_control_mode}').split('\n').includes('0'), 'the attached client');
  client.stdin!.write('x');
  await waitFor(() => agent.keys().includes('x'), 'the typed key at the pane');
  await agent.paint(SCREENS.claudeBlocked);
  await hubRowWhen(
    () => r.hub.get('/v1/agents'),
    (x) => x.pane === pane && x.state === 'blocked',
    'the blocked row',
  );
  await sleep(2000);
  expect(rx(r)).toHaveLength(0);
  expect(sample(await r.hub.metricsText(), 'tma_hub_notify_skipped_total{sink="phone",reason="looking"}')).toBe(1);

  // Nobody there: the client leaves, and the pane's next prompt rings.
  client.kill('SIGKILL');
  await waitFor(() => !r.scratch.tmux('list-clients', '-F', '#{client_control_mode}').split('\n').includes('0'), 'the client gone');
  await agent.paint(SCREENS.claudeWorking);
  await hubRowWhen(
    () => r.hub.get('/v1/agents'),
    (x) => x.pane === pane && x.state === 'working',
    'working again',
  );
  await agent.paint(SCREENS.claudeBlocked);
  await waitFor(() => rx(r).length > 0, 'the push', 10_000);
  await sleep(1500);
  expect(events(r.rx)).toMatchObject([{ pane, trigger: 'blocked' }]);
});

it('a collector reconnecting with 10 panes still blocked from before the cut sends no new push', { timeout: 90_000 }, async () => {
  const r = await rig({ dwellMs: 1000 }, 'nqrc', true);
  const panes = [r.scratch.start(), ...Array.from({ length: 9 }, () => r.scratch.newPane())];
  for (const p of panes) await r.scratch.standIn(p, 'claude', SCREENS.claudeWorking);
  r.start();
  await hubRowWhen(
    () => r.hub.get('/v1/agents'),
    () => true,
    'rows',
    20_000,
  );
  // All ten block at once, the way a hook claims it, in one tmux command.
  const now = String(Date.now());
  const chain = panes.flatMap((p) =>
    [
      '@agent_state',
      'blocked',
      '@agent_detail',
      'permission',
      '@agent_source',
      'hook',
      '@agent_evidence_at',
      now,
      '@agent_since',
      now,
      '@agent_attention',
      '1',
      '@agent_stamped_at',
      now,
    ]
      .reduce<string[][]>((acc, v, i, a) => (i % 2 ? acc : [...acc, ['set-option', '-p', '-t', p, v, a[i + 1]!, ';']]), [])
      .flat(),
  );
  r.scratch.tmux(...chain.slice(0, -1));
  await waitFor(() => events(r.rx).length === 10, 'ten blocked events', 15_000);
  await sleep(1500);
  // One burst, one grouped message.
  expect(rx(r)).toHaveLength(1);

  // The link is cut long enough for the hub to drop it, then comes back.
  r.proxy!.refuse(true);
  r.proxy!.sever();
  await sleep(3000);
  r.proxy!.refuse(false);
  await waitFor(() => (r.hub.session('build1')?.isOpen ?? false) === true, 'the link back', 20_000);
  await hubRowWhen(
    () => r.hub.get('/v1/agents'),
    (x) => x.state === 'blocked' && !x.stale,
    'rows back',
    20_000,
  );
  await sleep(4000);
  expect(rx(r)).toHaveLength(1);
  expect(events(r.rx)).toHaveLength(10);
});
