import { createServer, type Server } from 'node:http';
import { WebSocketServer } from 'ws';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { HubList, parseHubList, welcomeHubs } from '../../collector/fleet/hub-list.js';
import { dialHub } from '../../collector/fleet/ws-link.js';
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

/** An HTTP server that answers every WebSocket upgrade with 401, counting them. */
async function refusingHub(): Promise<{ url: string; tries: () => number; server: Server }> {
  let n = 0;
  const server = createServer();
  server.on('upgrade', (_req, socket) => {
    n++;
    socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `ws://127.0.0.1:${(server.address() as { port: number }).port}`, tries: () => n, server };
}

describe('dialling several hubs', () => {
  it('moves on from a refusal at once, and waits the refusal backoff only when every hub refused', async () => {
    const a = await refusingHub();
    const b = await refusingHub();
    const lines: string[] = [];
    const dialer = dialHub({
      url: '',
      hubs: new HubList(parseHubList(`${a.url},${b.url}`)),
      token: 't',
      onLink: () => undefined,
      log: (l) => lines.push(l),
      backoff: { baseMs: 50, capMs: 50 },
      refusedBackoff: { baseMs: 60_000, capMs: 60_000 },
    });
    try {
      const end = Date.now() + 5000;
      while (b.tries() === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 500));
      // One try each: the first refusal moved on to the second hub, the second ended the round.
      expect([a.tries(), b.tries()]).toEqual([1, 1]);
      expect(lines[0]).toMatch(
        new RegExp(
          `^hub ${a.url}/v1/collect refused this collector \\(refused by the hub \\(HTTP 401: unknown token\\)\\); trying ${b.url}/v1/collect in \\d+ ms$`,
        ),
      );
      expect(lines[1]).toMatch(/^hub refused this collector \(every hub refused; last: refused by the hub \(HTTP 401: unknown token\)\); retrying in \d+ s/);
      expect(lines).toHaveLength(2);
    } finally {
      dialer.stop();
      a.server.close();
      b.server.close();
    }
  });

  it('after host-busy, keeps trying at the base delay, so it lands within a moment of the host coming free', async () => {
    // The hub this collector was on has died (nothing listens there); the other says host-busy
    // until the dead hub's claim runs out, 2.5 s from now, then takes the link.
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
    const deadUrl = `ws://127.0.0.1:${(dead.address() as { port: number }).port}`;
    await new Promise<void>((r) => dead.close(() => r()));
    const freeAt = Date.now() + 2500;
    let linkedAt = 0;
    let busyAnswers = 0;
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    wss.on('connection', (ws) => {
      if (Date.now() < freeAt) {
        busyAnswers++;
        ws.send(JSON.stringify({ type: 'error', code: 'host-busy', message: 'another collector already publishes for b1' }));
        ws.close();
      } else linkedAt ||= Date.now();
    });
    const dialer = dialHub({
      url: '',
      hubs: new HubList(parseHubList(`${deadUrl},ws://127.0.0.1:${(wss.address() as { port: number }).port}`)),
      token: 't',
      onLink: () => undefined,
      // The largest delay each step allows: what a collector unlucky with its jitter waits.
      random: () => 0.999,
      backoff: { baseMs: 400, capMs: 30_000 },
    });
    try {
      const end = Date.now() + 10_000;
      while (linkedAt === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      // A backoff grown per round would wait 0.8 s, then 1.6 s: linked near 4 s, 1.5 s late.
      expect(busyAnswers).toBeGreaterThanOrEqual(3);
      expect(linkedAt - freeAt).toBeLessThan(1000);
    } finally {
      dialer.stop();
      await new Promise<void>((r) => wss.close(() => r()));
    }
  });
});
