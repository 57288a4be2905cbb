// The pieces behind quiet notifications and answer links, without a network: what a sink holds
// back (dwell, looking, cooldown), action-link tokens (a changed byte is refused), the nonce book
// (one claim per nonce, kept across a restart), and the collector's outbox on disk.

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NotifyOutbox } from '../../collector/notify/outbox.js';
import { panesInView } from '../../collector/tmux/clients.js';
import type { TmuxRunner } from '../../collector/tmux/runner-types.js';
import { loadActionKey } from '../../hub/notify/action-key.js';
import { mintLinks, mintToken, readToken } from '../../hub/notify/action-link.js';
import { dwellLeft, skipReason, type NotifyFleetView } from '../../hub/notify/hold.js';
import type { HubNotification } from '../../hub/notify/journal.js';
import { NonceBook } from '../../hub/notify/nonce-book.js';
import type { FleetNotification } from '../../shared/notify.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'tma-hold-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ev: FleetNotification = {
  trigger: 'blocked',
  server: '/tmp/tmux-0/default',
  pane: '%3',
  agent: 'claude',
  episode_ms: 1000,
  at: 1001,
  state: 'blocked',
  detail: 'permission',
  locator: 'main:1.0',
  repo: null,
  branch: null,
  context_pct: null,
  pending_tool: null,
  pending_summary: null,
};
const hn = (over: Partial<HubNotification> = {}): HubNotification => ({ ...ev, id: 'x', host: 'build1', received_ms: 10_000, ...over });
const view = (state: string, episode = 1000, looking = false): NotifyFleetView => ({
  pane: () => ({ state, episode_ms: episode, prompt_id: 'p1' }),
  pageLooking: () => looking,
});

describe('what a sink holds back', () => {
  it('waits out the dwell, then sends only what is still blocked on the same episode', () => {
    expect(dwellLeft({ dwellMs: 5000 }, hn(), 11_000)).toBe(4000);
    expect(dwellLeft({ dwellMs: 0 }, hn(), 11_000)).toBe(0);
    expect(dwellLeft({ dwellMs: 5000 }, hn({ trigger: 'done' }), 11_000)).toBe(0);
    const s = { dwellMs: 5000, cooldownMs: 0, whenLooking: 'skip' as const };
    expect(skipReason(s, hn(), view('blocked'), undefined, 15_000)).toBeNull();
    expect(skipReason(s, hn(), view('working'), undefined, 15_000)).toBe('answered');
    expect(skipReason(s, hn(), view('blocked', 2000), undefined, 15_000)).toBe('answered');
    expect(skipReason({ ...s, dwellMs: 0 }, hn(), null, undefined, 15_000)).toBeNull();
  });
  it('skips a pane someone looks at unless told to send, and holds a cooldown between episodes', () => {
    const s = { dwellMs: 0, cooldownMs: 60_000, whenLooking: 'skip' as const };
    expect(skipReason(s, hn({ looking: true }), view('blocked'), undefined, 0)).toBe('looking');
    expect(skipReason(s, hn(), view('blocked', 1000, true), undefined, 0)).toBe('looking');
    expect(skipReason({ ...s, whenLooking: 'send' }, hn(), view('blocked', 1000, true), undefined, 0)).toBeNull();
    expect(skipReason(s, hn({ episode_ms: 5000 }), null, { episode_ms: 1000, at: 0 }, 59_999)).toBe('cooldown');
    expect(skipReason(s, hn({ episode_ms: 5000 }), null, { episode_ms: 1000, at: 0 }, 60_000)).toBeNull();
  });
});

describe('action links', () => {
  it('reads back what it minted, and refuses any changed byte or another key', () => {
    const key = Buffer.alloc(32, 7);
    const t = mintToken(key, {
      host: 'build1',
      server: 's',
      pane: '%3',
      episode_ms: 1000,
      prompt_id: 'p1',
      action: 'approve',
      sink: 'phone',
      expires_ms: 99,
      nonce: 'ab',
    });
    expect(readToken(key, t)).toEqual({
      host: 'build1',
      server: 's',
      pane: '%3',
      episode_ms: 1000,
      prompt_id: 'p1',
      action: 'approve',
      sink: 'phone',
      expires_ms: 99,
      nonce: 'ab',
    });
    for (let i = 0; i < t.length; i += 7) {
      const c = t[i] === 'A' ? 'B' : 'A';
      const bad = t.slice(0, i) + c + t.slice(i + 1);
      if (bad !== t) expect(readToken(key, bad)).toBeNull();
    }
    expect(readToken(Buffer.alloc(32, 8), t)).toBeNull();
    // The signature's last character carries two unused bits: each of its other three spellings
    // decodes to the same bytes, and is still an altered link.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(t.at(-1)!);
    for (let low = 0; low < 4; low++) {
      const twin = `${t.slice(0, -1)}${alphabet[(last & ~3) | low]}`;
      if (twin !== t) expect(readToken(key, twin)).toBeNull();
    }
  });
  it('offers only the actions the host allows, and none for a pane no longer on that episode', () => {
    const d = {
      key: () => Buffer.alloc(32, 1),
      clock: () => 0,
      pane: () => ({ state: 'blocked', episode_ms: 1000, prompt_id: null }),
      allowed: () => ['approve'],
    };
    const sink = { name: 'phone', actions: ['approve', 'deny'] };
    expect(mintLinks(d, 'http://hub/', sink, hn()).map((l) => l.label)).toEqual(['Approve']);
    expect(mintLinks({ ...d, pane: () => ({ state: 'blocked', episode_ms: 2, prompt_id: null }) }, 'http://hub', sink, hn())).toEqual([]);
    expect(mintLinks(d, 'http://hub', { name: 'x' }, hn())).toEqual([]);
  });
  it('keeps its key 0600 and the same across a restart', () => {
    const d = tmp();
    const k = loadActionKey(d);
    expect(loadActionKey(d).equals(k)).toBe(true);
    expect(statSync(join(d, 'hub-action-key')).mode & 0o777).toBe(0o600);
  });
  it('grants each nonce once, before and after a restart, until it expires', async () => {
    const d = tmp();
    const book = new NonceBook(join(d, 'n'), () => 0);
    expect(Array.from({ length: 20 }, () => book.claim('aa', 100)).filter(Boolean)).toHaveLength(1);
    await book.persisted('aa');
    expect(new NonceBook(join(d, 'n'), () => 50).claim('aa', 100)).toBe(false);
    expect(new NonceBook(join(d, 'n'), () => 200).claim('aa', 300)).toBe(true);
  });
});

describe('the collector side', () => {
  it('keeps unacknowledged rings on disk across a restart, and forgets acked ones', () => {
    const file = join(tmp(), 'tma', 'outbox.jsonl');
    const a = new NotifyOutbox({ file });
    a.add(ev);
    a.add({ ...ev, pane: '%4' });
    a.ack([JSON.stringify([ev.server, '%4', 'blocked', 1000])]);
    a.close();
    const sent: string[] = [];
    const b = new NotifyOutbox({ file });
    b.bind((f) => (sent.push(f.type === 'notify' ? f.id : ''), true));
    b.flush();
    b.close();
    expect(sent).toEqual([JSON.stringify([ev.server, '%3', 'blocked', 1000])]);
  });
  it('counts a pane as looked at only for a non-control client active within 30 s', async () => {
    const now = 1_800_000_000_000;
    const out = [`0\t${now / 1000 - 5}\t%1`, `1\t${now / 1000}\t%2`, `0\t${now / 1000 - 120}\t%3`, ''].join('\n');
    const runner = { mode: 'spawn', run: () => Promise.resolve(out), runChain: () => Promise.resolve([]), close: () => undefined } as TmuxRunner;
    expect([...(await panesInView(runner, now))]).toEqual(['%1']);
  });
});
