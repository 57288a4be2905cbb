// A real hub on 127.0.0.1, port 0, with known tokens and a log captured in memory (so tests can
// check that nothing secret was written).

import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { HubConfig } from '../../hub/config/config.js';
import { startHub, type Hub, type StartHubOptions } from '../../hub/server.js';

export const TOKENS = {
  build1: 'tok-build1-7f3a9c',
  laptop: 'tok-laptop-2b8e41',
  viewer: 'tok-viewer-c0ffee',
  operator: 'tok-operator-bead5',
} as const;

export const HB_MS = 200;

export function testConfig(over: Partial<HubConfig> = {}): HubConfig {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    staleAfterMs: null,
    lostAfterMs: 86_400_000,
    collectors: [
      { host: 'build1', token: TOKENS.build1 },
      { host: 'laptop', token: TOKENS.laptop },
    ],
    clients: [
      { name: 'vic', token: TOKENS.viewer, role: 'viewer' },
      { name: 'olga', token: TOKENS.operator, role: 'operator' },
    ],
    ssh: [],
    ...over,
  };
}

export interface TestHub extends Hub {
  logLines: string[];
  get(path: string, token?: string | null, headers?: Record<string, string>): Promise<Response>;
  metricsText(): Promise<string>;
}

export async function startTestHub(opts: Partial<StartHubOptions> = {}): Promise<TestHub> {
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  });
  const hub = await startHub({
    config: testConfig(),
    logger: pino({ level: 'debug' }, sink),
    heartbeatMs: HB_MS,
    streamCoalesceMs: 10,
    ...opts,
  });
  const get = (path: string, token: string | null = TOKENS.viewer, headers: Record<string, string> = {}) =>
    fetch(`${hub.url}${path}`, { headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...headers } });
  return Object.assign(hub, {
    logLines,
    get,
    metricsText: async () => (await get('/metrics')).text(),
  });
}

/** The value of one sample line of Prometheus text, or undefined when absent. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
