// The hub notifier's pure and file-level parts: [[notify]] config, the journal across a restart,
// retry delays, and which sinks take what.

import { mkdtempSync, readFileSync, rmSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseHubConfig } from '../../hub/config/config.js';
import { batchDocument, ntfyMessage } from '../../hub/notify/deliver.js';
import { HubNotifier } from '../../hub/notify/hub-notifier.js';
import { retryDelay, sinkWants } from '../../hub/notify/sink-queue.js';
import { NotifyJournal, type HubNotification } from '../../hub/notify/journal.js';
import type { NotifySinkConfig } from '../../hub/notify/sink-config.js';
import type { FleetNotification } from '../../shared/notify.js';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const base = 'listen = "127.0.0.1:7480"\n';

describe('hub.toml [[notify]]', () => {
  it('settles sinks with defaults and reads a webhook secret from a file', () => {
    const c = parseHubConfig(
      '/etc/tma/hub.toml',
      `${base}[[notify]]\nname = "phone"\nkind = "ntfy"\nurl = "http://ntfy.internal/agents"\non = ["blocked", "done"]\n[[notify]]\nname = "ops"\nkind = "webhook"\nurl = "http://127.0.0.1:9000/tma"\nsecret_file = "webhook.secret"\nhosts = ["build1"]\n[[notify]]\nname = "script"\nkind = "command"\ncommand = "cat"\n`,
      (p) => {
        expect(p).toBe('/etc/tma/webhook.secret');
        return 'k3y\n';
      },
    );
    expect(c.notify).toEqual([
      {
        name: 'phone',
        kind: 'ntfy',
        url: 'http://ntfy.internal/agents',
        command: null,
        secret: null,
        on: ['blocked', 'done'],
        hosts: null,
        pageUrl: null,
        dwellMs: 5000,
        cooldownMs: 60_000,
        whenLooking: 'skip',
        actions: [],
        actionTtlMs: 900_000,
      },
      {
        name: 'ops',
        kind: 'webhook',
        url: 'http://127.0.0.1:9000/tma',
        command: null,
        secret: 'k3y',
        on: ['blocked'],
        hosts: ['build1'],
        pageUrl: null,
        dwellMs: 5000,
        cooldownMs: 60_000,
        whenLooking: 'skip',
        actions: [],
        actionTtlMs: 900_000,
      },
      {
        name: 'script',
        kind: 'command',
        url: null,
        command: 'cat',
        secret: null,
        on: ['blocked'],
        hosts: null,
        pageUrl: null,
        dwellMs: 5000,
        cooldownMs: 60_000,
        whenLooking: 'skip',
        actions: [],
        actionTtlMs: 900_000,
      },
    ]);
  });
  it('refuses what cannot work, naming the entry', () => {
    const bad = (t: string) => () => parseHubConfig('h.toml', base + t, () => '');
    expect(bad('[[notify]]\nname = "x"\nkind = "webhook"\n')).toThrow('h.toml: notify[0]: a webhook sink needs url');
    expect(bad('[[notify]]\nname = "x"\nkind = "command"\n')).toThrow('notify[0]: a command sink needs command');
    expect(bad('[[notify]]\nname = "x"\nkind = "ntfy"\nurl = "ftp://x"\n')).toThrow('notify[0].url');
    expect(bad('[[notify]]\nname = "x"\nkind = "ntfy"\nurl = "http://x"\nbogus = 1\n')).toThrow('notify[0].bogus: unknown key');
    expect(bad('[[notify]]\nname = "x"\nkind = "ntfy"\nurl = "http://x"\non = ["resolved"]\n')).toThrow('notify[0].on');
    expect(bad('[[notify]]\nname = "x"\nkind = "command"\ncommand = "a"\n[[notify]]\nname = "x"\nkind = "command"\ncommand = "b"\n')).toThrow('already listed');
    expect(bad('[[notify]]\nname = "x"\nkind = "webhook"\nurl = "http://x"\nsecret_file = "s"\n')).toThrow('the secret is empty');
  });
  it('action_confirm = "device" is kept; it needs actions; the default adds no key', () => {
    const one = (t: string) => parseHubConfig('h.toml', `${base}[[notify]]\nname = "p"\nkind = "ntfy"\nurl = "http://x"\n${t}`, () => '').notify![0]!;
    expect(one('actions = ["approve"]\naction_confirm = "device"\n').actionConfirm).toBe('device');
    expect('actionConfirm' in one('actions = ["approve"]\naction_confirm = "link"\n')).toBe(false);
    expect('actionConfirm' in one('actions = ["approve"]\n')).toBe(false);
    expect(() => one('action_confirm = "device"\n')).toThrow('notify[0]: action_confirm needs actions');
    expect(() => one('actions = ["approve"]\naction_confirm = "phone"\n')).toThrow('notify[0].action_confirm');
  });
  it('a config without sinks has none', () => {
    expect(parseHubConfig('h.toml', base).notify ?? []).toEqual([]);
  });
});

function ev(over: Partial<FleetNotification> = {}): FleetNotification {
  return {
    trigger: 'blocked',
    server: '/s',
    pane: '%1',
    agent: 'claude',
    episode_ms: 10,
    at: 11,
    state: 'blocked',
    detail: null,
    locator: 'm:0.0',
    repo: null,
    branch: null,
    context_pct: null,
    pending_tool: null,
    pending_summary: null,
    ...over,
  };
}

describe('journal', () => {
  it('survives a restart: accepted entries dedup, sent ones stay sent, pending ones come back; a torn line is skipped', () => {
    dir = mkdtempSync(join(tmpdir(), 'tma-journal-'));
    const path = join(dir, 'j.jsonl');
    const j = new NotifyJournal(path);
    const n = (id: string): HubNotification => ({ ...ev(), id, host: 'h', received_ms: 1 });
    // Not awaited: close() must write what is still queued.
    void j.accept(n('a'), ['s1', 's2']);
    void j.mark('a', 's1', 'sent', 1, null, 5);
    void j.accept(n('b'), ['s1']);
    j.close();
    appendFileSync(path, '{"op":"sink","id":"b","si');
    const k = new NotifyJournal(path);
    expect(k.has('a') && k.has('b')).toBe(true);
    expect(k.get('a')!.sinks.get('s1')!.state).toBe('sent');
    expect(k.unfinished().map((e) => [e.n.id, [...e.sinks].filter(([, d]) => d.state === 'pending').map(([s]) => s)])).toEqual([
      ['a', ['s2']],
      ['b', ['s1']],
    ]);
    k.close();
    // Reopening compacted the file: no torn line left, one accept per entry.
    expect(
      readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"accept"')),
    ).toHaveLength(2);
  });
  it('forgets the oldest finished entries past its size, never unfinished ones', () => {
    const j = new NotifyJournal(null, 2);
    const n = (id: string): HubNotification => ({ ...ev(), id, host: 'h', received_ms: 1 });
    // The entry is held at once; without a file there is nothing to wait for.
    void j.accept(n('a'), ['s']);
    void j.accept(n('b'), []);
    void j.accept(n('c'), []);
    expect([j.has('a'), j.has('b'), j.has('c')]).toEqual([true, false, true]);
  });
});

describe('delivery rules', () => {
  it('retry delays grow, stay under the cap, and are jittered', () => {
    const t = { retryBaseMs: 1000, retryCapMs: 8000 };
    expect(retryDelay(1, t, () => 0)).toBe(500);
    expect(retryDelay(1, t, () => 1)).toBe(1000);
    expect(retryDelay(3, t, () => 0)).toBe(2000);
    expect(retryDelay(30, t, () => 1)).toBe(8000);
    expect(retryDelay(30, t, () => 0)).toBe(4000);
  });
  it('sinks take their triggers and hosts; resolved only where its blocked went, never ntfy', () => {
    const sink = (over: Partial<NotifySinkConfig>): NotifySinkConfig => ({
      name: 's',
      kind: 'webhook',
      url: 'http://x',
      command: null,
      secret: null,
      on: ['blocked'],
      hosts: null,
      pageUrl: null,
      ...over,
    });
    expect(sinkWants(sink({}), { trigger: 'blocked', host: 'a' }, false)).toBe(true);
    expect(sinkWants(sink({}), { trigger: 'done', host: 'a' }, false)).toBe(false);
    expect(sinkWants(sink({ hosts: ['b'] }), { trigger: 'blocked', host: 'a' }, false)).toBe(false);
    expect(sinkWants(sink({}), { trigger: 'resolved', host: 'a' }, true)).toBe(true);
    expect(sinkWants(sink({}), { trigger: 'resolved', host: 'a' }, false)).toBe(false);
    expect(sinkWants(sink({ kind: 'ntfy' }), { trigger: 'resolved', host: 'a' }, true)).toBe(false);
  });
  it('a failing sink is retried, and what arrives meanwhile joins the retried message', async () => {
    let fail = true;
    const calls: string[][] = [];
    const hub = new HubNotifier({
      journalPath: null,
      logger: pino({ level: 'silent' }),
      context: { hubUrl: 'http://hub' },
      sinks: [{ name: 's', kind: 'webhook', url: 'http://x', command: null, secret: null, on: ['blocked'], hosts: null, pageUrl: null }],
      timing: { groupMs: 10, retryBaseMs: 40, retryCapMs: 40 },
      deliver: async (_s, b) => {
        calls.push(b.events.map((e) => e.pane));
        if (fail) throw new Error('HTTP 500');
      },
    });
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
    };
    // Received as a link would, not awaited: the test waits on what the sink is sent.
    void hub.receive('h', ev({ pane: '%1' }));
    await until(() => calls.length >= 1);
    void hub.receive('h', ev({ pane: '%2' }));
    void hub.receive('h', ev({ pane: '%2' }));
    await until(() => calls.some((c) => c.includes('%2')));
    fail = false;
    await until(() => hub.metricsText().includes('sent_total{sink="s"} 2'));
    expect(calls[0]).toEqual(['%1']);
    expect(calls[calls.length - 1]).toEqual(['%1', '%2']);
    expect(hub.metricsText()).toContain('tma_hub_notify_sent_total{sink="s"} 2');
    expect(hub.metricsText()).toMatch(/tma_hub_notify_retried_total\{sink="s"\} [1-9]/);
    expect(hub.metricsText()).toContain('tma_hub_notify_duplicates_total 1');
    hub.close();
  });
});

describe('a message resumed from another hub', () => {
  it('goes again under its id; a part of it that comes back later goes under a new one', async () => {
    const sent: { id: string; panes: string[] }[] = [];
    const journal = new NotifyJournal(null);
    const hub = new HubNotifier({
      journalPath: null,
      journal,
      logger: pino({ level: 'silent' }),
      context: { hubUrl: 'http://hub' },
      sinks: [{ name: 's', kind: 'webhook', url: 'http://x', command: null, secret: null, on: ['blocked'], hosts: null, pageUrl: null }],
      timing: { groupMs: 10 },
      deliver: (_s, b) => {
        sent.push({ id: b.id, panes: b.events.map((e) => e.pane) });
        return Promise.resolve();
      },
    });
    const n = (id: string, pane: string): HubNotification => ({ ...ev({ pane }), id, host: 'h', received_ms: 1 });
    const [a, b] = [n('a', '%1'), n('b', '%2')];
    // Owed to the sink, as the shared book says of what a dead hub held.
    await journal.accept(a, ['s']);
    await journal.accept(b, ['s']);
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
    };
    hub.take('s', a, 'dead-hub-7');
    await until(() => sent.length === 1);
    hub.take('s', b, 'dead-hub-7');
    await until(() => sent.length === 2);
    hub.close();
    expect(sent[0]).toEqual({ id: 'dead-hub-7', panes: ['%1'] });
    // A receiver dropping a repeated id would lose %2 under the old one.
    expect(sent[1]!.panes).toEqual(['%2']);
    expect(sent[1]!.id).not.toBe('dead-hub-7');
  });
});

describe('what a prompt asks, in a sink', () => {
  const asked: HubNotification = { ...ev({ pending_tool: 'Bash', pending_summary: 'Bash: rm -rf build/' }), id: 'n1', host: 'build1', received_ms: 1 };
  const sink = (more: string): NotifySinkConfig =>
    parseHubConfig('h.toml', `${base}[[notify]]\nname = "s"\nkind = "webhook"\nurl = "http://127.0.0.1:9/x"\n${more}`, () => 'tok').notify![0]!;

  it('reaches only a sink that says include_summary = true', () => {
    const plain = sink('');
    const opted = sink('include_summary = true\n');
    expect(batchDocument(plain, { id: 'b', events: [asked] }, 'http://hub').events[0]).toMatchObject({ pending_tool: 'Bash', pending_summary: null });
    expect(batchDocument(opted, { id: 'b', events: [asked] }, 'http://hub').events[0]).toMatchObject({ pending_summary: 'Bash: rm -rf build/' });
    expect(ntfyMessage({ id: 'b', events: [asked] }, 'http://hub', plain).body).not.toContain('rm -rf');
    expect(ntfyMessage({ id: 'b', events: [asked] }, 'http://hub', opted).body).toContain('Bash: rm -rf build/');
  });
});
