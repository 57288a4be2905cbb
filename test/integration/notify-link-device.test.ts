// `action_confirm = "device"`: a notification's action link alone no longer fires. A real
// collector on a scratch tmux server with a stand-in claude that logs every key, a real hub and a
// loopback ntfy/webhook receiver: the link POSTed bare or with a viewer's token sends nothing and
// does not use the link up; with an operator's token it sends one key; the ntfy button only opens
// the link's page, and that page has no button of its own.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NotifySinkConfig } from '../../hub/notify/sink-config.js';
import { TOKENS, sample, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { collectorHome, loopbackReceiver, sleep, startCollector, type Collector, type Receiver } from '../support/notify-rig.js';
import { ScratchTmux, waitFor, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let dir = '';
let rx: Receiver;
let hub: TestHub;
let scratch: ScratchTmux;
let agent: StandIn;
let collector: Collector;

const sink = (name: string, kind: 'ntfy' | 'webhook', path: string): NotifySinkConfig => ({
  name,
  kind,
  url: `${rx.url}${path}`,
  command: null,
  secret: null,
  on: ['blocked'],
  hosts: null,
  pageUrl: null,
  dwellMs: 300,
  cooldownMs: 0,
  whenLooking: 'send',
  actions: ['approve'],
  actionTtlMs: 15 * 60_000,
  actionConfirm: 'device',
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-link-device-'));
  rx = await loopbackReceiver();
  hub = await startTestHub({
    config: testConfig({ notify: [sink('phone', 'ntfy', '/ntfy/agents'), sink('bridge', 'webhook', '/hook')] }),
    notifyJournal: join(dir, 'hub-state', 'hub-notifications.jsonl'),
    actTimeoutMs: 5000,
  });
  scratch = new ScratchTmux('nldv');
  agent = await scratch.standIn(scratch.start(), 'claude', SCREENS.claudeBlocked, { afterKey: { fixture: SCREENS.claudeWorking, delayMs: 0 } });
  collector = startCollector({ hubPort: hub.port, home: collectorHome(join(dir, 'c'), TOKENS.build1), socket: scratch.name, host: 'build1' });
}, 60_000);

afterAll(async () => {
  await collector?.kill();
  await hub?.close();
  scratch?.kill();
  await rx?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const settledKeys = async () => {
  await sleep(300);
  return agent.keys();
};

it('a device-confirmed link fires only beside an operator token, once', { timeout: 60_000 }, async () => {
  await waitFor(() => rx.ntfy().length > 0 && rx.hooks().length > 0, 'the first push', 20_000);
  // The phone's button opens the page (ntfy `view`); it cannot POST the answer by itself.
  expect(String(rx.ntfy()[0]!.headers.actions)).toMatch(/^view, Approve, http:\/\/[^,]+$/);
  const doc = JSON.parse(rx.hooks()[0]!.body) as { events: { actions: { action: string; url: string }[] }[] };
  const approve = doc.events[0]!.actions.find((a) => a.action === 'approve')!.url;

  // The page says what it needs and offers no button that would only be refused.
  const page = await (await fetch(approve, { headers: { accept: 'text/html' } })).text();
  expect(page).not.toContain('<form');
  expect(page).toContain('signed-in device');
  expect(((await (await fetch(approve)).json()) as { fires: string }).fires).toMatch(/operator token/);

  // The link alone, or beside a viewer's token: refused, nothing sent, the link not used up.
  const bare = await fetch(approve, { method: 'POST' });
  expect(bare.status).toBe(401);
  expect(((await bare.json()) as { refused: string }).refused).toBe('unconfirmed');
  const viewer = await fetch(approve, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.viewer}` } });
  expect(viewer.status).toBe(403);
  expect(((await viewer.json()) as { refused: string }).refused).toBe('unconfirmed');
  const collectorToken = await fetch(approve, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.build1}` } });
  expect(collectorToken.status).toBe(401);
  expect(await settledKeys()).toBe('');

  // An operator's signed-in device confirms: one key, in the audit under that client's name.
  const fired = await fetch(approve, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.operator}` } });
  expect(fired.status).toBe(200);
  expect(await fired.json()).toMatchObject({ outcome: 'sent', action: 'approve', host: 'build1' });
  await waitFor(() => agent.keys() !== '', 'the key at the stand-in');
  expect(await settledKeys()).toBe('1');
  expect(hub.logLines.some((l) => l.includes('"who":"notify-link:bridge:olga"'))).toBe(true);
  const again = await fetch(approve, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.operator}` } });
  expect(again.status).toBe(409);
  expect(await settledKeys()).toBe('1');
  expect(sample(await hub.metricsText(), 'tma_hub_notify_link_total{use="unconfirmed"}')).toBe(3);
});
