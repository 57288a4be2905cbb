// The host notifier's pure parts: when a pane rings, what the payload says, where a command goes.

import { describe, expect, it } from 'vitest';
import { commandFor, displayText, fleetEvent, hookPayload, logLine, oscText, payloadEnv, PAYLOAD_KEYS, resolvedEvent } from '../../collector/notify/payload.js';
import { contextStep, dueTrigger, fromEventEnabled, markerFor, triggerOf } from '../../collector/notify/trigger.js';
import { displayEscape } from '../../collector/notify/host-sinks.js';
import type { StampedState } from '../../collector/core/types.js';
import { FLEET_NOTIFICATION_KEYS, notificationKey } from '../../shared/notify.js';
import { sampleRow } from './row-keys.test.js';

function stamp(over: Partial<StampedState> = {}): StampedState {
  return {
    state: 'blocked',
    detail: 'permission',
    source: 'capture',
    evidenceAt: 1000,
    since: 1000,
    stampedAt: 1000,
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

describe('dueTrigger: one ring per episode', () => {
  it('blocked rings while the marker is absent or older than the episode', () => {
    expect(dueTrigger(stamp(), ['blocked'])).toBe('blocked');
    expect(dueTrigger(stamp({ notifiedAt: 999 }), ['blocked'])).toBe('blocked');
    expect(dueTrigger(stamp({ notifiedAt: 1000 }), ['blocked'])).toBeNull();
    expect(dueTrigger(stamp({ notifiedAt: 5000 }), ['blocked'])).toBeNull();
  });
  it('only enabled triggers ring; done is idle with attention', () => {
    expect(dueTrigger(stamp(), ['done'])).toBeNull();
    expect(dueTrigger(stamp({ state: 'idle', attention: true }), ['done'])).toBe('done');
    expect(dueTrigger(stamp({ state: 'idle', attention: false }), ['done'])).toBeNull();
    expect(dueTrigger(stamp({ state: 'working' }), ['blocked', 'done'])).toBeNull();
    expect(triggerOf({ state: 'unknown', attention: true })).toBeNull();
  });
  it('a second completion in one idle run (turn_at moves, since does not) is a new episode', () => {
    const idle = stamp({ state: 'idle', since: 1000, turnAt: 3000, notifiedAt: 2000 });
    expect(dueTrigger(idle, ['done'])).toBe('done');
    expect(dueTrigger({ ...idle, notifiedAt: 3000 }, ['done'])).toBeNull();
  });
  it('the marker is never before the episode instant, even when the clock stepped back', () => {
    expect(markerFor(stamp({ since: 9000 }), 5000)).toBe(9000);
    expect(markerFor(stamp({ since: 1000 }), 5000)).toBe(5000);
    expect(markerFor(stamp({ state: 'idle', since: 1000, turnAt: 7000 }), 5000)).toBe(7000);
  });
});

describe('contextStep: once per crossing', () => {
  it('fires when armed at or over the threshold, holds while disarmed, re-arms 10 below', () => {
    expect(contextStep(80, undefined, 80)).toBe('fire');
    expect(contextStep(79, undefined, 80)).toBe('hold');
    expect(contextStep(95, '123', 80)).toBe('hold');
    expect(contextStep(71, '123', 80)).toBe('hold');
    expect(contextStep(70, '123', 80)).toBe('hold');
    expect(contextStep(69.9, '123', 80)).toBe('rearm');
    expect(contextStep(null, undefined, 80)).toBe('hold');
    expect(contextStep(null, '123', 80)).toBe('hold');
  });
});

describe('payload schema 2', () => {
  const row = sampleRow({ state: 'blocked', detail: 'permission', title: 'secret #title', repo: 'r', branch: null, context: 42 });
  const fire = { trigger: 'blocked' as const, row, episodeMs: 1000, at: 1500 };
  it('has its keys in order, the title only with include_title, since_ms as an age', () => {
    const p = hookPayload(fire, false);
    expect(Object.keys(p)).toEqual(PAYLOAD_KEYS.filter((k) => k !== 'title'));
    expect(p).toMatchObject({ schema: 2, state: 'blocked', since_ms: 500, episode_ms: 1000, repo: 'r', branch: '', context_pct: 42 });
    expect(Object.keys(hookPayload(fire, true))).toEqual([...PAYLOAD_KEYS]);
    expect(hookPayload(fire, true).title).toBe('secret #title');
  });
  it('the log line puts at right after schema', () => {
    expect(Object.keys(JSON.parse(logLine(fire, false)) as object).slice(0, 3)).toEqual(['schema', 'at', 'agent']);
  });
  it('the env mirror leaves valueless keys unset and the title out unless asked', () => {
    const env = payloadEnv(fire, false);
    expect(env).toMatchObject({ TMA_STATE: 'blocked', TMA_PANE: '%3', TMA_SINCE_MS: '500', TMA_EPISODE_MS: '1000', TMA_REPO: 'r', TMA_CONTEXT_PCT: '42' });
    expect(env).not.toHaveProperty('TMA_TITLE');
    expect(env).not.toHaveProperty('TMA_BRANCH');
    expect(payloadEnv(fire, true).TMA_TITLE).toBe('secret #title');
  });
  it('the status line shows the title, OSC 9 never does, and # is escaped for tmux', () => {
    expect(displayText(fire)).toBe('tma: claude blocked — secret #title');
    expect(displayText({ ...fire, row: { ...row, title: '' } })).toBe('tma: claude blocked in %3');
    expect(oscText(fire)).toBe('claude blocked');
    expect(displayEscape('a #{b}\n')).toBe('a ##{b} ');
  });
  it('context_high carries no detail', () => {
    expect(hookPayload({ ...fire, trigger: 'context_high' }, false).detail).toBeNull();
  });
});

describe('fleet events', () => {
  const row = sampleRow({ state: 'blocked', title: 'secret', pending_tool: 'Bash', pending_summary: 'rm -rf build' });
  const fire = { trigger: 'blocked' as const, row, episodeMs: 1000, at: 1500 };
  it('are title-free, keyed in order, and carry the prompt summary only where prompts are shared', () => {
    const e = fleetEvent(fire, false);
    expect(Object.keys(e)).toEqual([...FLEET_NOTIFICATION_KEYS]);
    expect(JSON.stringify(e)).not.toContain('secret');
    expect(e).toMatchObject({ pending_tool: 'Bash', pending_summary: null, episode_ms: 1000 });
    expect(fleetEvent(fire, true).pending_summary).toBe('rm -rf build');
  });
  it('a resolved event keeps the episode and key shape of its blocked one', () => {
    const b = fleetEvent(fire, true);
    const r = resolvedEvent(b, 9000, { ...row, state: 'working' });
    expect(r).toMatchObject({ trigger: 'resolved', episode_ms: 1000, state: 'working', at: 9000, pending_summary: null });
    expect(notificationKey(r)).not.toBe(notificationKey(b));
    expect(notificationKey({ ...r, trigger: 'blocked' })).toBe(notificationKey(b));
  });
});

describe('command routing', () => {
  const cfg = { command: 'global', triggerCommands: { blocked: 'only-blocked', done: null, context_high: null } };
  it('TMA_NOTIFY_CMD over per-trigger over global', () => {
    expect(commandFor('blocked', cfg, {})).toBe('only-blocked');
    expect(commandFor('done', cfg, {})).toBe('global');
    expect(commandFor('done', cfg, { TMA_NOTIFY_CMD: 'forced' })).toBe('forced');
    expect(commandFor('done', cfg, { TMA_NOTIFY_CMD: '' })).toBe('global');
    expect(commandFor('done', { command: null, triggerCommands: cfg.triggerCommands }, {})).toBeNull();
  });
});

describe('fromEventEnabled: whether tma event rings inline', () => {
  it('the environment decides when set (1 on, anything else off), else [notify] from_event', () => {
    expect(fromEventEnabled({}, undefined)).toBe(false);
    expect(fromEventEnabled({}, false)).toBe(false);
    expect(fromEventEnabled({}, true)).toBe(true);
    expect(fromEventEnabled({ TMA_NOTIFY_FROM_EVENT: '1' }, undefined)).toBe(true);
    expect(fromEventEnabled({ TMA_NOTIFY_FROM_EVENT: '1' }, false)).toBe(true);
    expect(fromEventEnabled({ TMA_NOTIFY_FROM_EVENT: '0' }, true)).toBe(false);
    expect(fromEventEnabled({ TMA_NOTIFY_FROM_EVENT: 'yes' }, true)).toBe(false);
    expect(fromEventEnabled({ TMA_NOTIFY_FROM_EVENT: '' }, true)).toBe(false);
  });
});
