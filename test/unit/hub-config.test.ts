import { describe, expect, it } from 'vitest';
import { DEFAULT_LOST_AFTER_MS, HubConfigError, parseHubConfig, parseListen, staleAfterDefault } from '../../hub/config/config.js';
import { HEARTBEAT_MS } from '../../shared/protocol.js';

const noFiles = (p: string): string => {
  throw Object.assign(new Error(`no file ${p}`), { code: 'ENOENT' });
};
const parse = (text: string, read = noFiles) => parseHubConfig('/etc/tma/hub.toml', text, read);
const err = (text: string, read = noFiles) => {
  try {
    parse(text, read);
  } catch (e) {
    expect(e).toBeInstanceOf(HubConfigError);
    return (e as Error).message;
  }
  throw new Error('expected an error');
};

describe('hub.toml', () => {
  it('defaults: loopback listen, three heartbeats to stale, a day to lost, nobody allowed', () => {
    const c = parse('');
    expect(c).toEqual({
      listen: { host: '127.0.0.1', port: 7480 },
      staleAfterMs: null,
      lostAfterMs: DEFAULT_LOST_AFTER_MS,
      collectors: [],
      clients: [],
      ssh: [],
    });
    expect(staleAfterDefault()).toBe(3 * HEARTBEAT_MS);
    expect(staleAfterDefault(200)).toBe(600);
  });

  it('reads collectors, clients and ssh entries with their defaults', () => {
    const c = parse(`
listen = "0.0.0.0:9000"
stale_after_secs = 20
lost_after_secs = 3600
[[collector]]
host = "build1"
token = "  tok-b1 \\n"
[[client]]
name = "alice"
token = "tok-a"
role = "operator"
[[ssh]]
name = "gpu1"
host = "gpu1.example"
user = "me"
identity = "/k"
known_hosts = "/kh"
`);
    expect(c.listen).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(c.staleAfterMs).toBe(20_000);
    expect(c.lostAfterMs).toBe(3_600_000);
    expect(c.collectors).toEqual([{ host: 'build1', token: 'tok-b1' }]);
    expect(c.clients).toEqual([{ name: 'alice', token: 'tok-a', role: 'operator' }]);
    expect(c.ssh).toEqual([
      { name: 'gpu1', host: 'gpu1.example', port: 22, user: 'me', identity: '/k', known_hosts: '/kh', command: 'tma collector --stdio --host-name gpu1' },
    ]);
  });

  it('token_file is read relative to the config file and trimmed', () => {
    const read = (p: string) => {
      expect(p).toBe('/etc/tma/secrets/b1');
      return 'from-file\n';
    };
    expect(parse('[[collector]]\nhost = "b1"\ntoken_file = "secrets/b1"\n', read).collectors[0]!.token).toBe('from-file');
  });

  it('public_url is an http(s) URL, kept without its trailing slash', () => {
    expect(parse('public_url = "https://fleet.lan:8443/tma/"\n').publicUrl).toBe('https://fleet.lan:8443/tma');
    expect(parse('').publicUrl).toBeUndefined();
    expect(err('public_url = "fleet.lan"\n')).toBe('/etc/tma/hub.toml: public_url: an http:// or https:// URL');
  });

  it('[metrics] per_pane is read, strictly', () => {
    expect(parse('[metrics]\nper_pane = true\n').metrics).toEqual({ perPane: true });
    expect(parse('[metrics]\n').metrics).toEqual({ perPane: false });
    expect(parse('').metrics).toBeUndefined();
    expect(err('[metrics]\nper_pane = "yes"\n')).toMatch(/^\/etc\/tma\/hub.toml: metrics.per_pane: /);
    expect(err('[metrics]\nperpane = true\n')).toBe('/etc/tma/hub.toml: metrics.perpane: unknown key');
  });

  it('unknown keys are errors naming the file and the key', () => {
    expect(err('listne = "x:1"')).toBe('/etc/tma/hub.toml: listne: unknown key');
    expect(err('[[client]]\nname = "a"\ntoken = "t"\nrole = "viewer"\ncolour = 1\n')).toBe('/etc/tma/hub.toml: client[0].colour: unknown key');
  });

  it('refuses empty, missing, doubled and shared tokens without quoting them', () => {
    expect(err('[[collector]]\nhost = "b1"\ntoken = "   "\n')).toBe('/etc/tma/hub.toml: collector[0]: the token is empty');
    expect(err('[[collector]]\nhost = "b1"\ntoken_file = "e"\n', () => '\n')).toBe('/etc/tma/hub.toml: collector[0]: the token is empty');
    expect(err('[[collector]]\nhost = "b1"\n')).toMatch(/collector\[0\]: token or token_file is required/);
    expect(err('[[collector]]\nhost = "b1"\ntoken = "x"\ntoken_file = "y"\n')).toMatch(/not both/);
    expect(err('[[collector]]\nhost = "b1"\ntoken_file = "nope"\n')).toMatch(/collector\[0\]\.token_file: cannot read \/etc\/tma\/nope: ENOENT/);
    const shared = err('[[collector]]\nhost = "b1"\ntoken = "same-secret"\n[[client]]\nname = "a"\ntoken = "same-secret"\nrole = "viewer"\n');
    expect(shared).toMatch(/client\[0\]: uses the same token as collector\[0\]/);
    expect(shared).not.toContain('same-secret');
  });

  it('refuses a host listed twice and a bad role', () => {
    expect(err('[[collector]]\nhost = "b1"\ntoken = "x"\n[[collector]]\nhost = "b1"\ntoken = "y"\n')).toMatch(/collector\[1\]\.host: "b1" is already listed/);
    expect(err('[[client]]\nname = "a"\ntoken = "t"\nrole = "admin"\n')).toMatch(/client\[0\]\.role/);
  });

  it('listen: host:port with ports 0 through 65535, IPv6 in brackets', () => {
    expect(parseListen('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseListen('127.0.0.1:65535')).toEqual({ host: '127.0.0.1', port: 65535 });
    expect(() => parseListen('127.0.0.1:65536')).toThrow(HubConfigError);
    expect(parseListen('[::1]:7480')).toEqual({ host: '::1', port: 7480 });
    expect(() => parseListen('7480')).toThrow(HubConfigError);
    expect(() => parseListen('::1:7480')).toThrow(HubConfigError);
    expect(err('listen = "nope"')).toMatch(/^\/etc\/tma\/hub.toml: listen "nope"/);
  });

  it('stale/lost seconds must be positive', () => {
    expect(err('stale_after_secs = 0')).toMatch(/stale_after_secs/);
    expect(parse('stale_after_secs = 0.5').staleAfterMs).toBe(500);
    expect(err('lost_after_secs = -1')).toMatch(/lost_after_secs/);
  });
});
