// Answering from the notification, end to end: a real collector on a scratch tmux server with a
// stand-in claude that logs every key it gets, a real hub, and a loopback receiver playing ntfy
// and a webhook. The push carries Approve and Deny as single-use links; only one POST of a good
// link sends a key, whatever else is tried with it.

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NotifySinkConfig } from '../../hub/notify/sink-config.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { collectorHome, hubRowWhen, loopbackReceiver, ntfyActionUrls, sleep, startCollector, type Collector, type Receiver } from '../support/notify-rig.js';
import { REPO, ScratchTmux, waitFor, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

const SECOND_PROMPT = join(REPO, 'test/integration/screens/claude-second-prompt.txt');

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
  includeSummary: true,
  dwellMs: 500,
  cooldownMs: 0,
  whenLooking: 'send',
  actions: ['approve', 'deny'],
  actionTtlMs: 15 * 60_000,
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-notify-act-'));
  rx = await loopbackReceiver();
  hub = await startTestHub({
    config: testConfig({ notify: [sink('phone', 'ntfy', '/ntfy/agents'), sink('bridge', 'webhook', '/hook')] }),
    notifyJournal: join(dir, 'hub-state', 'hub-notifications.jsonl'),
    actTimeoutMs: 5000,
  });
  scratch = new ScratchTmux('nact');
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
const rows = () => hub.get('/v1/agents');

it(
  'offers Approve and Deny; GET, altered, reused and outdated links send nothing; one POST sends one key; 20 concurrent POSTs send one',
  { timeout: 90_000 },
  async () => {
    await waitFor(() => rx.ntfy().length > 0 && rx.hooks().length > 0, 'the first push', 20_000);
    await sleep(1500);
    expect(rx.ntfy()).toHaveLength(1);
    const push = rx.ntfy()[0]!;
    const links = ntfyActionUrls(push.headers.actions);
    expect([...links.keys()]).toEqual(['Approve', 'Deny']);
    for (const l of links.values()) expect(l.method).toBe('POST');
    const approve = links.get('Approve')!.url;
    const deny = links.get('Deny')!.url;
    expect(approve).not.toContain(TOKENS.operator);
    expect(approve).not.toBe(deny);

    // What is asked, where the sink allows it: the ntfy body and the webhook event.
    const row = await hubRowWhen(rows, (r) => r.host === 'build1' && r.state === 'blocked', 'the blocked row');
    expect(row.pending_summary).toBeTruthy();
    expect(push.body).toContain(row.pending_summary!);
    const doc = JSON.parse(rx.hooks()[0]!.body) as {
      events: { pending_summary: string; actions: { label: string; action: string; url: string }[] }[];
      actions: unknown[];
    };
    expect(doc.events[0]!.pending_summary).toBe(row.pending_summary);
    expect(doc.events[0]!.actions.map((a) => [a.label, a.action])).toEqual([
      ['Approve', 'approve'],
      ['Deny', 'deny'],
    ]);
    expect(doc.actions).toEqual(doc.events[0]!.actions);

    // A GET (a preview, a prefetch) shows what it would do and sends nothing.
    const preview = await fetch(approve);
    expect(preview.status).toBe(200);
    expect(((await preview.json()) as { would: { action: string; pane: string } }).would).toMatchObject({ action: 'approve', pane: agent.pane });
    const page = await fetch(approve, { headers: { accept: 'text/html' } });
    expect(await page.text()).toContain('<form method="post"');
    expect(await settledKeys()).toBe('');

    // Altered: another action written into the claim, or a signature changed by one character.
    const cut = approve.lastIndexOf('.');
    const [path, sig] = [approve.slice(0, cut), approve.slice(cut + 1)];
    const claim = JSON.parse(Buffer.from(path.split('/').pop()!, 'base64url').toString()) as unknown[];
    claim[6] = 'deny';
    const forged = `${path.slice(0, path.lastIndexOf('/') + 1)}${Buffer.from(JSON.stringify(claim)).toString('base64url')}.${sig}`;
    const flipped = `${approve.slice(0, -1)}${approve.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of [forged, flipped]) {
      const r = await fetch(bad, { method: 'POST' });
      expect(r.status).toBe(403);
      expect(((await r.json()) as { refused: string }).refused).toBe('altered');
    }
    expect(await settledKeys()).toBe('');

    // One POST: one key, and the pane leaves blocked.
    const fired = await fetch(approve, { method: 'POST' });
    expect(fired.status).toBe(200);
    expect(await fired.json()).toMatchObject({ outcome: 'sent', action: 'approve', host: 'build1' });
    await waitFor(() => agent.keys() !== '', 'the key at the stand-in');
    expect(await settledKeys()).toBe('1');
    await hubRowWhen(rows, (r) => r.host === 'build1' && r.pane === agent.pane && r.state !== 'blocked', 'the pane leaving blocked');

    // The same link again.
    const again = await fetch(approve, { method: 'POST' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { refused: string }).refused).toBe('used');
    expect(await settledKeys()).toBe('1');

    // The agent moves on to its next prompt: the unused Deny of the first push is for a prompt gone.
    await agent.paint(SECOND_PROMPT);
    const next = await hubRowWhen(rows, (r) => r.host === 'build1' && r.state === 'blocked' && r.episode_ms !== row.episode_ms, 'the next prompt');
    expect(next.prompt_id).not.toBe(row.prompt_id);
    const stale = await fetch(deny, { method: 'POST' });
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { refused: string }).refused).toBe('changed');
    expect(await settledKeys()).toBe('1');

    // The next prompt's own push; 20 concurrent POSTs of its Approve send one key.
    await waitFor(() => rx.ntfy().length === 2, 'the push for the next prompt', 15_000);
    const fresh = ntfyActionUrls(rx.ntfy()[1]!.headers.actions).get('Approve')!.url;
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(fresh, { method: 'POST' }).then((r) => r.status)));
    expect(answers.filter((s) => s === 200)).toHaveLength(1);
    expect(answers.filter((s) => s === 409)).toHaveLength(19);
    await waitFor(() => agent.keys().length === 2, 'the second key');
    expect(await settledKeys()).toBe('11');

    // Every use is in the act audit and /metrics; the key stays with the hub, 0600.
    const m = await hub.metricsText();
    expect(m).toContain('tma_hub_notify_link_total{use="forwarded"} 2');
    expect(m).toContain('tma_hub_notify_link_total{use="previewed"} 2');
    expect(m).toContain('tma_hub_notify_link_total{use="altered"} 2');
    expect(m).toContain('tma_hub_notify_link_total{use="used"} 20');
    expect(m).toContain('tma_hub_notify_link_total{use="changed"} 1');
    const audit = hub.logLines.filter((l) => l.includes('"audit":"remote-act"') && l.includes('notify-link:phone'));
    expect(audit.filter((l) => l.includes('"msg":"remote act"'))).toHaveLength(2);
    // 20 used, 1 changed name their sink; the 2 altered cannot (nothing in them is believed).
    expect(audit.filter((l) => l.includes('notify link refused')).length).toBe(21);
    expect(hub.logLines.filter((l) => l.includes('notify link refused') && l.includes('"refused":"altered"'))).toHaveLength(2);
    expect(statSync(join(dir, 'hub-state', 'hub-action-key')).mode & 0o777).toBe(0o600);
  },
);
