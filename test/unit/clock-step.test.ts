// A wall clock that stepped back: times written while it was ahead must not hold back what comes
// after. The episode marker, the outbox's resend time and the output watch's last edge each treat
// a time ahead of now as the step it is (the rule `since` follows).

import { describe, expect, it, vi } from 'vitest';
import type { StampedState } from '../../collector/core/types.js';
import { NotifyOutbox, RESEND_MS } from '../../collector/notify/outbox.js';
import { dueTrigger } from '../../collector/notify/trigger.js';
import { QuietEdges } from '../../collector/tmux/control-output.js';
import type { CollectorFrame } from '../../shared/protocol.js';
import type { FleetNotification } from '../../shared/notify.js';

const HOUR = 3_600_000;
const NOW = 1_796_000_000_000;

function stamp(over: Partial<StampedState> = {}): StampedState {
  return {
    state: 'blocked',
    detail: 'permission',
    source: 'capture',
    evidenceAt: NOW,
    since: NOW,
    stampedAt: NOW,
    attention: true,
    notifiedAt: null,
    turnAt: 0,
    hash: null,
    pid: 42,
    session: null,
    subagents: [],
    ...over,
  };
}

describe('after a backward clock step', () => {
  it('an episode marker from the future does not count as rung; one within the skew still does', () => {
    expect(dueTrigger(stamp({ notifiedAt: NOW + HOUR }), ['blocked'], NOW)).toBe('blocked');
    expect(dueTrigger(stamp({ notifiedAt: NOW + 1500 }), ['blocked'], NOW)).toBeNull();
    expect(dueTrigger(stamp({ notifiedAt: NOW }), ['blocked'], NOW)).toBeNull();
  });

  it('a notification sent "in the future" is offered again at the next resend', () => {
    vi.useFakeTimers();
    let now = NOW + HOUR;
    const sent: CollectorFrame[] = [];
    const box = new NotifyOutbox({ now: () => now });
    box.bind((f) => (sent.push(f), true));
    const ev = { trigger: 'done', server: '/s', pane: '%1', episode_ms: NOW, at: NOW } as FleetNotification;
    box.add(ev);
    now = NOW;
    vi.advanceTimersByTime(RESEND_MS);
    expect(sent).toHaveLength(2);
    box.close();
    vi.useRealTimers();
  });

  it('an output edge taken an hour ahead does not delay the next look by an hour', () => {
    const q = new QuietEdges({ quietMs: 150, maxBusyMs: 1000, minGapMs: 250 });
    q.output('%1', NOW + HOUR);
    expect(q.due(NOW + HOUR + 200)).toEqual(['%1']);
    q.output('%1', NOW);
    expect(q.nextAt()).toBe(NOW + 150);
    expect(q.due(NOW + 150)).toEqual(['%1']);
  });
});
