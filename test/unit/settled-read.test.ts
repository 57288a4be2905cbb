// The judgement a quick `tma status` shares with the full cycle: rows straight from the listing
// while a collector's heartbeat vouches for them, and no answer whenever a cycle would look again.

import { describe, expect, it } from 'vitest';
import { decodeStamp } from '../../collector/core/store-codec.js';
import type { StampedState } from '../../collector/core/types.js';
import { paintedSince, settledRows, SETTLED_READ, stampStands } from '../../collector/engine/settled-read.js';
import { OPTION_KEYS, SEP, type OptionKey } from '../../collector/engine/pane-list.js';

const NOW = 1_800_000_000_000;
const FRESHNESS = 3000;

function pane(id: string, session: string, opts: Partial<Record<OptionKey, string>>, windowActivity = 0): string {
  const fields = [id, '100', session, '0', id.slice(1), 'node', String(windowActivity), '0', '', '24', '/src'];
  return [...fields, ...OPTION_KEYS.map((k) => opts[k] ?? ''), '', '', 'a title'].join(SEP) + '\n';
}

const stamp = (state: string, at: number, more: Partial<Record<OptionKey, string>> = {}) => ({
  '@agent_name': 'claude',
  '@agent_state': state,
  '@agent_since': String(at - 5000),
  '@agent_evidence_at': String(at - 100),
  '@agent_stamped_at': String(at),
  ...more,
});

/** The outputs of SETTLED_READ: listing, last poll, heartbeat, server facts, clients. */
function outs(panes: string[], heartbeat: string, clients = ''): string[] {
  return [panes.join(''), '', heartbeat, '/tmp/tmux-0/default\u001f42\u001f1700000000\n', clients];
}

describe('settledRows', () => {
  const old = NOW - 60_000; // far older than the freshness window: only the heartbeat makes it current
  const panes = [pane('%1', 'a', stamp('idle', old)), pane('%2', 'b', stamp('blocked', old)), pane('%3', 'c', {})];

  it("takes every settled stamp as current under a fresh heartbeat, in the cycle's row order", () => {
    expect(SETTLED_READ.map((c) => c[0])).toEqual(['list-panes', 'show-options', 'show-options', 'display-message', 'list-clients']);
    const rows = settledRows(outs(panes, String(NOW - 2000)), NOW, FRESHNESS, 'box')!;
    expect(rows.map((r) => [r.pane, r.state, r.server, r.host])).toEqual([
      ['%2', 'blocked', '/tmp/tmux-0/default', 'box'],
      ['%1', 'idle', '/tmp/tmux-0/default', 'box'],
    ]);
  });

  it('gives no answer without a heartbeat that vouches now', () => {
    for (const hb of ['', 'x', String(NOW - 3000), String(NOW - 10_000), String(NOW + 50)]) {
      expect(settledRows(outs(panes, hb), NOW, FRESHNESS, 'box'), hb).toBeNull();
    }
    expect(settledRows(outs(panes, String(NOW - 10)), NOW, 0, 'box')).toBeNull();
  });

  it('gives no answer when a cycle would look at a pane again or change its stamp', () => {
    const hb = String(NOW - 500);
    const cases: [string, string][] = [
      ['half-written', pane('%4', 'd', stamp('working', old, { '@agent_evidence_at': String(old + 10) }))],
      ['future-dated', pane('%4', 'd', stamp('working', NOW + 5000))],
      ['unreadable', pane('%4', 'd', stamp('sleeping', old))],
      ['ignored', pane('%4', 'd', stamp('idle', old, { '@agent_ignore': '1' }))],
    ];
    for (const [what, line] of cases) expect(settledRows(outs([...panes, line], hb), NOW, FRESHNESS, 'box'), what).toBeNull();
    expect(settledRows(outs([...panes, pane('%4', 'd', { '@agent_ignore': '1' })], hb), NOW, FRESHNESS, 'box')).toHaveLength(2);
  });

  it('gives no answer when a person typed into a flagged pane after its episode began', () => {
    const hb = String(NOW - 500);
    const done = [pane('%1', 'a', stamp('idle', old, { '@agent_attention': '1' }))];
    const episodeSecs = Math.floor((old - 5000) / 1000);
    const typed = (secs: number, control = '0') => `%1\u001f${secs}\u001f${control}\n`;
    expect(settledRows(outs(done, hb, typed(episodeSecs + 1)), NOW, FRESHNESS, 'box')).toBeNull();
    expect(settledRows(outs(done, hb, typed(episodeSecs)), NOW, FRESHNESS, 'box')).toHaveLength(1);
    expect(settledRows(outs(done, hb, typed(episodeSecs + 1, '1')), NOW, FRESHNESS, 'box')).toHaveLength(1);
    expect(settledRows(outs(done, hb, ''), NOW, FRESHNESS, 'box')![0]).toMatchObject({ state: 'idle', attention: true, done: true });
  });
});

describe('a stamp over a screen that painted since', () => {
  const decoded = (state: string, at: number): StampedState => {
    const d = decodeStamp(stamp(state, at));
    if (!d.ok || d.stamp === null) throw new Error('fixture stamp does not decode');
    return d.stamp;
  };
  const at = NOW - 1200; // young: inside the 3 s freshness window
  const sec = (ms: number) => Math.floor(ms / 1000);

  it('painted since: an activity second not wholly before the stamp (tmux gives whole seconds)', () => {
    const s = decoded('working', at);
    expect(paintedSince(s, 0)).toBe(false);
    expect(paintedSince(s, sec(at) - 1)).toBe(false);
    expect(paintedSince(s, sec(at))).toBe(true);
    expect(paintedSince(s, sec(NOW))).toBe(true);
    // A stamp written exactly on a second boundary: the second before lies wholly before it.
    expect(paintedSince(decoded('idle', 1_800_000_000_000), 1_799_999_999)).toBe(false);
  });

  it('a one-shot reader does not trust a young stamp over a pane that painted after it', () => {
    // The answered prompt: a blocked stamp 1.2 s old while the agent visibly works.
    expect(stampStands(decoded('blocked', at), NOW, false, FRESHNESS, sec(NOW))).toBe(false);
    // The hook's working claim with the dialog painted after it.
    expect(stampStands(decoded('working', at), NOW, false, FRESHNESS, sec(NOW))).toBe(false);
    // The same stamps over a screen that has not moved since stand.
    expect(stampStands(decoded('blocked', at), NOW, false, FRESHNESS, sec(at) - 1)).toBe(true);
    expect(stampStands(decoded('working', at), NOW, false, FRESHNESS, 0)).toBe(true);
  });

  it("under a collector's vouch only a blocked stamp is looked at again after a paint", () => {
    const old = NOW - 60_000;
    expect(stampStands(decoded('working', old), NOW, true, FRESHNESS, sec(NOW))).toBe(true);
    expect(stampStands(decoded('idle', old), NOW, true, FRESHNESS, sec(NOW))).toBe(true);
    expect(stampStands(decoded('blocked', old), NOW, true, FRESHNESS, sec(NOW))).toBe(false);
    expect(stampStands(decoded('blocked', old), NOW, true, FRESHNESS, sec(old) - 1)).toBe(true);
  });

  it('the quick status declines a blocked pane that painted after its stamp, and answers the rest', () => {
    const old = NOW - 60_000;
    const hb = String(NOW - 500);
    const quiet = [pane('%1', 'a', stamp('blocked', old), sec(old) - 1), pane('%2', 'b', stamp('working', old), sec(NOW))];
    expect(settledRows(outs(quiet, hb), NOW, FRESHNESS, 'box')?.map((r) => r.state)).toEqual(['blocked', 'working']);
    const answered = [pane('%1', 'a', stamp('blocked', old), sec(NOW)), pane('%2', 'b', stamp('working', old), sec(NOW))];
    expect(settledRows(outs(answered, hb), NOW, FRESHNESS, 'box')).toBeNull();
  });
});
