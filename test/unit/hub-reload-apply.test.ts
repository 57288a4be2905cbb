import { pino, type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseHubConfig, type HubConfig } from '../../hub/config/config.js';
import { applyReload, reloadOnSignal, type ReloadTarget } from '../../hub/config/reload.js';

const parse = (text: string): HubConfig => parseHubConfig('/etc/tma/hub.toml', text, () => '');
const ssh = (name: string, user = 'dev') => `[[ssh]]\nname = "${name}"\nhost = "${name}.internal"\nuser = "${user}"\nidentity = "/k"\nknown_hosts = "/kh"\n`;

/** A running hub reduced to a journal of what the reload asked of it. */
function fakeHub(config: HubConfig): { target: ReloadTarget; calls: string[] } {
  const calls: string[] = [];
  let current = config;
  const target: ReloadTarget = {
    logger: pino({ level: 'silent' }),
    current: () => current,
    commit: (c) => (current = c),
    setCredentials: (c) => void calls.push(`credentials ${c.collectors.map((x) => x.host).join(',')}|${c.clients.map((x) => x.name).join(',')}`),
    closeClientStreams: (name, reason) => (calls.push(`close-streams ${name}: ${reason}`), 1),
    closeHostLinks: (host, reason) => (calls.push(`close-links ${host}: ${reason}`), 1),
    declareHost: (host, transport) => void calls.push(`declare ${host} ${transport}`),
    dialSsh: (t) => void calls.push(`dial ${t.name} as ${t.user}`),
    stopSsh: async (name, reason) => void calls.push(`stop ${name}: ${reason}`),
    setSinks: (sinks) => void calls.push(`sinks ${sinks.map((s) => s.name).join(',')}`),
  };
  return { target, calls };
}

describe('applyReload', () => {
  const before = parse(
    '[[collector]]\nhost = "a"\ntoken = "ta"\n[[collector]]\nhost = "b"\ntoken = "tb"\n' +
      '[[client]]\nname = "vic"\ntoken = "tv"\nrole = "viewer"\n[[client]]\nname = "olga"\ntoken = "to"\nrole = "operator"\n' +
      ssh('gpu1') +
      ssh('gpu3'),
  );

  it('swaps credentials first, then ends what they no longer cover, then redials ssh; untouched parts get no call', async () => {
    const next = parse(
      '[[collector]]\nhost = "b"\ntoken = "tb2"\n[[collector]]\nhost = "c"\ntoken = "tc"\n' +
        '[[client]]\nname = "olga"\ntoken = "to"\nrole = "viewer"\n' +
        ssh('gpu2') +
        ssh('gpu3', 'ops') +
        '[[notify]]\nname = "ops"\nkind = "webhook"\nurl = "http://127.0.0.1:9/hook"\n',
    );
    const { target, calls } = fakeHub(before);
    const r = await applyReload(target, next);
    expect(calls).toEqual([
      'credentials b,c|olga',
      'close-streams vic: client vic was removed by a reload of hub.toml',
      'close-links a: the token for host a was removed by a reload of hub.toml',
      'close-links b: the token for host b was changed by a reload of hub.toml',
      'declare c ws',
      'stop gpu1: ssh entry gpu1 was removed by a reload of hub.toml',
      'stop gpu3: ssh entry gpu3 was changed by a reload of hub.toml',
      'declare gpu2 ssh',
      'dial gpu2 as dev',
      'declare gpu3 ssh',
      'dial gpu3 as ops',
      'sinks ops',
    ]);
    expect(r.summary).toBe('reload: -1 client, ~1 client role, +1 host token, -1 host token, ~1 host token, ssh: +gpu2 -gpu1 ~gpu3, notify sinks replaced');
    expect(target.current()).toBe(next);
  });

  it('the same file again only re-reads the credentials', async () => {
    const { target, calls } = fakeHub(before);
    const r = await applyReload(target, before);
    expect(calls).toEqual(['credentials a,b|vic,olga']);
    expect(r.summary).toBe('reload: no changes');
  });
});

describe('reloadOnSignal', () => {
  const tick = () => new Promise((r) => setTimeout(r, 10));
  const fake = () => {
    const lines: string[] = [];
    const reloaded: HubConfig[] = [];
    const logger = {
      info: (m: unknown) => lines.push(`info ${String(m)}`),
      warn: (m: unknown) => lines.push(`warn ${String(m)}`),
      error: (_o: unknown, m: unknown) => lines.push(`error ${String(m)}`),
    } as unknown as Logger;
    return { lines, reloaded, hub: { logger, reload: async (c: HubConfig) => (reloaded.push(c), { diff: null as never, summary: '' }) } };
  };

  it('a signal during start-up is applied once the hub is attached; a broken file keeps the config and says why', async () => {
    let text = '[[client]]\nname = "a"\ntoken = "t"\nrole = "viewer"\n';
    const r = reloadOnSignal('/etc/tma/hub.toml', (file, warn) => {
      warn('a warning');
      return parseHubConfig(file, text);
    });
    try {
      const f = fake();
      process.emit('SIGHUP', 'SIGHUP');
      await tick();
      expect(f.reloaded).toHaveLength(0);
      r.attach(f.hub);
      await tick();
      expect(f.reloaded.map((c) => c.clients[0]!.name)).toEqual(['a']);
      text = '[[client]]\nname = "a"\nrole = "boss"\n';
      process.emit('SIGHUP', 'SIGHUP');
      await tick();
      expect(f.reloaded).toHaveLength(1);
      expect(f.lines.at(-1)).toMatch(/^error reload failed, keeping the running config: \/etc\/tma\/hub\.toml: client\[0\]\.role/);
      // What the loader warns about is logged at each read.
      expect(f.lines.filter((l) => l === 'warn a warning')).toHaveLength(2);
    } finally {
      r.stop();
    }
  });

  it('without a file there is nothing to reload, and it says so', async () => {
    const r = reloadOnSignal(null, () => {
      throw new Error('never read');
    });
    try {
      const f = fake();
      r.attach(f.hub);
      process.emit('SIGHUP', 'SIGHUP');
      await tick();
      expect(f.lines).toEqual(['info reload: no hub.toml (zero-config hub): nothing to reload']);
    } finally {
      r.stop();
    }
  });
});
