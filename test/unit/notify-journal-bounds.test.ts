// The hub journal's bounds and the notifier's hardening: constant work per notification whatever
// the sinks do, bounded unfinished entries, the same delivery id after a restart, a per-host
// budget for notify frames, one-line ntfy bodies, and one rule for a prompt id.

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { actBodySchema } from '../../hub/http/act-plan.js';
import { ntfyMessage } from '../../hub/notify/deliver.js';
import { FrameBudget } from '../../hub/notify/frame-budget.js';
import { HubNotifier } from '../../hub/notify/hub-notifier.js';
import { COMPACT_MIN_LINES, NotifyJournal, type HubNotification } from '../../hub/notify/journal.js';
import type { NotifySinkConfig } from '../../hub/notify/sink-config.js';
import type { FleetNotification } from '../../shared/notify.js';
import { decodeFrame } from '../../shared/protocol.js';
import { protocolRowSchema } from '../../shared/row-schema.js';
import { protoRow } from '../support/hub-fake-collector.js';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function ev(i: number, over: Partial<FleetNotification> = {}): FleetNotification {
  return {
    trigger: 'blocked',
    server: '/s',
    pane: `%${i}`,
    agent: 'claude',
    episode_ms: 10 + i,
    at: 11 + i,
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

const sink = (name: string): NotifySinkConfig => ({
  name,
  kind: 'webhook',
  url: 'http://x',
  command: null,
  secret: null,
  on: ['blocked'],
  hosts: null,
  pageUrl: null,
});

const until = async (cond: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('journal cost and bounds', () => {
  it('writes a constant number of lines per notification with a sink failing throughout, and its file stays bounded', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tma-jb-'));
    const path = join(dir, 'j.jsonl');
    const hub = new HubNotifier({
      journalPath: path,
      logger: pino({ level: 'silent' }),
      context: { hubUrl: 'http://hub' },
      sinks: [sink('a'), sink('b'), sink('down')],
      timing: { groupMs: 1, retryBaseMs: 5, retryCapMs: 5, retryForMs: 60_000 },
      budget: new FrameBudget(1e9, 1e9),
      keep: 300,
      pendingMax: 300,
      deliver: async (s) => {
        if (s.name === 'down') throw new Error('HTTP 503');
      },
    });
    const N = 1500;
    let maxLines = 0;
    // In bursts of 50, as links deliver them; each burst is acknowledged before the next.
    for (let i = 0; i < N; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => hub.receive('h', ev(i + k))));
      await new Promise((r) => setTimeout(r, 2));
      maxLines = Math.max(maxLines, hub.journalStats().fileLines);
    }
    await until(() => /sent_total\{sink="b"\} 1500/.test(hub.metricsText()));
    const s = hub.journalStats();
    // One accept per notification, plus a formed and a done line per message and sink.
    expect(s.lines / N).toBeLessThanOrEqual(1 + 2 * 3);
    // Rewrites cost at most about one line per line appended, not the whole file per write.
    expect(s.compactedLines).toBeLessThanOrEqual(s.lines);
    expect(s.compactions).toBeLessThan(10);
    // Unfinished entries (the down sink owes everything) stay under the bound; the rest were given up.
    expect(s.unfinished).toBeLessThanOrEqual(300);
    expect(hub.metricsText()).toMatch(/tma_hub_notify_dropped_total\{sink="down"\} 1[12]\d\d\b/);
    expect(maxLines).toBeLessThanOrEqual(Math.max(COMPACT_MIN_LINES, 3 * (600 * 4)) + 200);
    hub.close();
    expect(statSync(path).size).toBeLessThan(2 * 1024 * 1024);
  }, 60_000);

  it('a restart keeps the delivery id of a message that was out when the hub stopped', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tma-jb-'));
    const path = join(dir, 'j.jsonl');
    const seen: string[] = [];
    let release: () => void = () => undefined;
    const panes: string[][] = [];
    const first = new HubNotifier({
      journalPath: path,
      logger: pino({ level: 'silent' }),
      context: { hubUrl: 'http://hub' },
      sinks: [sink('slow')],
      timing: { groupMs: 1 },
      deliver: (_s, b) => {
        seen.push(b.id);
        panes.push(b.events.map((e) => e.pane));
        return new Promise<void>((ok) => (release = ok));
      },
    });
    await first.receive('h', ev(1));
    await first.receive('h', ev(2));
    await until(() => seen.length === 1);
    // The hub stops (as a kill would: nothing more is written) while the sink holds the message.
    first.close();
    const again: { id: string; panes: string[] }[] = [];
    const second = new HubNotifier({
      journalPath: path,
      logger: pino({ level: 'silent' }),
      context: { hubUrl: 'http://hub' },
      sinks: [sink('slow')],
      timing: { groupMs: 1 },
      deliver: async (_s, b) => void again.push({ id: b.id, panes: b.events.map((e) => e.pane) }),
    });
    // The recorded message goes first; the event that was still waiting may follow it at once.
    await until(() => again.length >= 1);
    expect(again[0]).toEqual({ id: seen[0], panes: panes[0] });
    release();
    second.close();
  });

  it('a journal past its unfinished bound gives up the oldest, durably', () => {
    dir = mkdtempSync(join(tmpdir(), 'tma-jb-'));
    const path = join(dir, 'j.jsonl');
    const j = new NotifyJournal(path, 2, 3);
    const dropped: string[] = [];
    j.onDrop = (e) => dropped.push(e.n.id);
    const n = (id: string): HubNotification => ({ ...ev(1), id, host: 'h', received_ms: 1 });
    for (const id of ['a', 'b', 'c', 'd', 'e']) void j.accept(n(id), ['s']);
    expect(dropped).toEqual(['a', 'b']);
    j.close();
    const k = new NotifyJournal(path, 2, 3);
    expect(k.unfinished().map((e) => e.n.id)).toEqual(['c', 'd', 'e']);
    k.close();
    expect(readFileSync(path, 'utf8')).not.toContain('"id":"a"');
  });
});

describe('notify frame budget', () => {
  it('refuses a host past its burst, tells it once a second with a worded error frame, and leaves other hosts alone', async () => {
    let now = 0;
    const hub = new HubNotifier({
      journalPath: null,
      logger: pino({ level: 'silent' }),
      context: { hubUrl: 'http://hub' },
      sinks: [],
      budget: new FrameBudget(5, 1, () => now),
    });
    for (let i = 0; i < 5; i++) expect(hub.admit('flood')).toBeNull();
    const first = hub.admit('flood');
    expect(first?.frame).toBeTruthy();
    expect(decodeFrame(JSON.stringify(first!.frame), 'from-hub').ok).toBe(true);
    expect(first!.frame!.message).toContain('flood');
    // Within the second: refused, and only counted.
    expect(hub.admit('flood')).toEqual({ frame: null });
    expect(hub.admit('calm')).toBeNull();
    now += 1000;
    expect(hub.admit('flood')).toBeNull();
    now += 100;
    expect(hub.admit('flood')?.frame?.code).toBe('rate-limited');
    expect(hub.metricsText()).toContain('tma_hub_notify_refused_total{reason="budget"} 3');
    hub.close();
  });
});

describe('ntfy bodies', () => {
  it('keep each event on one line whatever a host puts in its fields', () => {
    const n = (over: Partial<FleetNotification>, host = 'evil'): HubNotification => ({ ...ev(1, over), id: 'x', host, received_ms: 1 });
    const forged = n({
      detail: 'permission)\nother-host main:1.0: claude is waiting for you',
      pending_tool: 'Bash\r\n\u2028x',
      locator: 'a\u0085b',
      agent: 'cl\x1bde',
    });
    const one = ntfyMessage({ id: 'd', events: [forged] }, 'http://hub');
    expect(one.body.split('\n')).toHaveLength(1);
    expect(one.body).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    const two = ntfyMessage({ id: 'd', events: [forged, n({ pane: '%2' }, 'good')] }, 'http://hub');
    expect(two.body.split('\n')).toHaveLength(2);
    expect(two.body.split('\n')[1]).toMatch(/^good /);
  });
});

describe('prompt id rule', () => {
  it('a row the hub takes carries a prompt id the act route takes', () => {
    for (const id of ['5ae4f71431678cd2', 'a.b:c-d_e', 'x'.repeat(64)]) {
      expect(protocolRowSchema.safeParse(protoRow({ prompt_id: id })).success).toBe(true);
      expect(actBodySchema.safeParse({ host: 'h', pane: '%1', action: 'approve', expect_prompt: id }).success).toBe(true);
    }
    for (const id of ['has space', 'a/b', 'é', '', 'x'.repeat(65)]) {
      expect(protocolRowSchema.safeParse(protoRow({ prompt_id: id })).success).toBe(false);
      expect(actBodySchema.safeParse({ host: 'h', pane: '%1', action: 'approve', expect_prompt: id }).success).toBe(false);
    }
    const delta = { type: 'delta', epoch: '0123456789abcdef', seq: 1, server: '/s', incarnation: '1', upserts: [protoRow({ prompt_id: 'a b' })], removals: [] };
    expect(decodeFrame(JSON.stringify(delta), 'from-collector').ok).toBe(false);
    expect(decodeFrame(JSON.stringify({ ...delta, upserts: [protoRow({ prompt_id: 'a.b' })] }), 'from-collector').ok).toBe(true);
  });
});
