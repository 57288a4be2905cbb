import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { HubList, parseHubList, welcomeHubs } from '../../collector/fleet/hub-list.js';
import { parseHubConfig } from '../../hub/config/config.js';
import { diffHubConfig } from '../../hub/config/diff.js';
import { LinkSession } from '../../hub/link/session.js';
import { HubMetrics } from '../../hub/metrics.js';
import { MemoryFleetStore } from '../../hub/store/memory-store.js';
import { linkPair } from '../../shared/link.js';
import { decodeFrame, welcomeFrame } from '../../shared/protocol.js';
import { EPOCH_A } from '../support/hub-fake-collector.js';

describe('a collector’s list of hubs', () => {
  it('reads a comma list in order, as collect URLs, without duplicates', () => {
    expect(parseHubList('ws://a:7480, ws://b:7480/,wss://c/v1/collect,ws://a:7480')).toEqual([
      'ws://a:7480/v1/collect',
      'ws://b:7480/v1/collect',
      'wss://c/v1/collect',
    ]);
    expect(parseHubList('ws://a:1')).toEqual(['ws://a:1/v1/collect']);
    expect(() => parseHubList('ws://a:1,,ws://b:1')).toThrow(/empty entry/);
    expect(() => parseHubList('ws://a:1,http://b:1')).toThrow(/over WebSocket/);
  });

  it('moves on in order and says when a whole round has been tried', () => {
    const l = new HubList(['ws://a/', 'ws://b/', 'ws://c/']);
    expect(l.current).toBe('ws://a/');
    expect(l.advance()).toBe(false);
    expect(l.current).toBe('ws://b/');
    expect(l.advance()).toBe(false);
    expect(l.advance()).toBe(true);
    expect(l.current).toBe('ws://a/');
    expect(new HubList(['ws://a/']).advance()).toBe(true);
    expect(() => new HubList([])).toThrow(/at least one hub/);
  });

  it('learns the hubs a welcome names after the ones given, ignoring what is known or not a ws URL', () => {
    const l = new HubList(parseHubList('ws://a:1'));
    const text = JSON.stringify({ type: 'welcome', protocol: 1, resume_from: null, hubs: ['ws://a:1', 'ws://b:1', 'http://c:1', 'nonsense'] });
    expect(welcomeHubs(text)).toEqual(['ws://a:1', 'ws://b:1', 'http://c:1', 'nonsense']);
    expect(l.learn(welcomeHubs(text))).toEqual(['ws://b:1/v1/collect']);
    expect(l.all).toEqual(['ws://a:1/v1/collect', 'ws://b:1/v1/collect']);
    expect(l.learn(welcomeHubs(text))).toEqual([]);
    expect(welcomeHubs('{"type":"heartbeat","at":1}')).toEqual([]);
    expect(welcomeHubs('{"type":"welcome","hubs":')).toEqual([]);
  });
});

describe('the welcome’s hubs key', () => {
  it('pins the welcome key set', () => {
    expect(Object.keys(welcomeFrame.shape)).toEqual(['type', 'protocol', 'resume_from', 'host', 'hubs']);
  });

  it('is a list of ws URLs a collector decodes', () => {
    const ok = decodeFrame(JSON.stringify({ type: 'welcome', protocol: 1, resume_from: null, hubs: ['ws://a:1', 'wss://b/v1/collect'] }), 'from-hub');
    expect(ok.ok).toBe(true);
    const bad = decodeFrame(JSON.stringify({ type: 'welcome', protocol: 1, resume_from: null, hubs: ['http://a:1'] }), 'from-hub');
    expect(bad).toMatchObject({ ok: false, error: { code: 'bad-frame' } });
  });

  it('comes from hub.toml [fleet] hubs, strictly checked, and a change is applied on reload', () => {
    const c = parseHubConfig('hub.toml', '[fleet]\nhubs = ["ws://a:7480", "wss://b.lan"]\n');
    expect(c.fleetHubs).toEqual(['ws://a:7480', 'wss://b.lan']);
    expect(parseHubConfig('hub.toml', '')).not.toHaveProperty('fleetHubs');
    expect(() => parseHubConfig('hub.toml', '[fleet]\nhubs = ["http://a:7480"]\n')).toThrow(/fleet\.hubs\[0\]: a ws:\/\/ or wss:\/\/ URL/);
    expect(() => parseHubConfig('hub.toml', '[fleet]\npeers = []\n')).toThrow(/fleet\.peers: unknown key/);
    expect(diffHubConfig(parseHubConfig('hub.toml', ''), c).liveChanged).toContain('fleet.hubs');
  });

  it('is sent in the welcome only when the hub knows its peers', async () => {
    const welcomes = async (fleetHubs?: () => readonly string[]) => {
      const [hubEnd, peer] = linkPair();
      const got: Record<string, unknown>[] = [];
      peer.onMessage((t) => got.push(JSON.parse(t) as Record<string, unknown>));
      const s = new LinkSession({
        link: hubEnd,
        store: new MemoryFleetStore({ clock: Date.now }),
        metrics: new HubMetrics(),
        logger: pino({ level: 'silent' }),
        transport: 'ws',
        boundHost: 'b1',
        heartbeatMs: 1000,
        deadAfterMs: 3000,
        ...(fleetHubs ? { fleetHubs } : {}),
      });
      peer.send(JSON.stringify({ type: 'hello', protocol: 1, host: 'b1', collector_version: 'x', epoch: EPOCH_A, actions_allowed: [] }));
      await new Promise((r) => setTimeout(r, 10));
      s.close();
      return got[0];
    };
    expect(await welcomes()).toEqual({ type: 'welcome', protocol: 1, resume_from: null });
    expect(await welcomes(() => [])).toEqual({ type: 'welcome', protocol: 1, resume_from: null });
    expect(await welcomes(() => ['ws://a:1', 'ws://b:1'])).toEqual({ type: 'welcome', protocol: 1, resume_from: null, hubs: ['ws://a:1', 'ws://b:1'] });
  });
});
