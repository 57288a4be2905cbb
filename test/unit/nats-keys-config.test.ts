// The fleet's NATS keys and hub.toml's [nats] section: every name becomes one valid subject token
// (and back), and a [nats] section is read strictly, like the rest of hub.toml.

import { describe, expect, it } from 'vitest';
import { parseHubConfig, withNatsFlag, HubConfigError } from '../../hub/config/config.js';
import { decodeToken, encodeToken, ownerKey, parseHostKey, parseRowKey, rowKey, statusKey } from '../../hub/nats/keys.js';

const KV_KEY = /^[-/_=.A-Za-z0-9]+$/;
const parse = (text: string) => parseHubConfig('/etc/tma/hub.toml', text, () => '');

describe('NATS keys', () => {
  it('any host, server and pane is one token, and comes back unchanged', () => {
    const names = ['build1.example.com', '/tmp/tmux-1000/default', '%12', '', 'a b*c>d', 'ünï', '..', 'k'];
    for (const n of names) {
      const t = encodeToken(n);
      expect(t).toMatch(/^k[A-Za-z0-9_-]*$/);
      expect(decodeToken(t)).toBe(n);
    }
    const key = rowKey('build1.example.com', '/tmp/tmux-1000/default', '%12');
    expect(key).toMatch(KV_KEY);
    expect(key.split('.')).toHaveLength(3);
    expect(parseRowKey(key)).toEqual({ host: 'build1.example.com', server: '/tmp/tmux-1000/default', pane: '%12' });
    expect(parseHostKey(statusKey('a.b'))).toEqual({ kind: 's', host: 'a.b' });
    expect(parseHostKey(ownerKey('a.b'))).toEqual({ kind: 'o', host: 'a.b' });
    expect(parseRowKey('x.y')).toBeNull();
    expect(parseHostKey('q.kAA')).toBeNull();
  });
});

describe('hub.toml [nats]', () => {
  it('reads url, servers, creds_file (beside the file), replicas and lease', () => {
    const c = parse('[nats]\nurl = "nats://a:4222"\nservers = ["nats://b:4222", "nats://a:4222"]\ncreds_file = "hub.creds"\nreplicas = 3\nlease_secs = 5\n');
    expect(c.nats).toEqual({ servers: ['nats://a:4222', 'nats://b:4222'], credsFile: '/etc/tma/hub.creds', replicas: 3, leaseMs: 5000 });
  });

  it('is absent unless configured, and refuses what it cannot use', () => {
    expect(parse('').nats).toBeUndefined();
    expect(() => parse('[nats]\n')).toThrow(/nats: set url or servers/);
    expect(() => parse('[nats]\nurl = "http://a"\n')).toThrow(/nats\.url/);
    expect(() => parse('[nats]\nurl = "nats://a:4222"\nreplicas = 2\n')).toThrow(/nats\.replicas/);
    expect(() => parse('[nats]\nurl = "nats://a:4222"\nbucket = "x"\n')).toThrow(/nats\.bucket: unknown key/);
  });

  it('--nats takes the servers and keeps the rest of [nats]', () => {
    const c = parse('[nats]\nurl = "nats://a:4222"\nreplicas = 3\n');
    expect(withNatsFlag(c, 'nats://x:1,nats://y:2').nats).toMatchObject({ servers: ['nats://x:1', 'nats://y:2'], replicas: 3 });
    expect(withNatsFlag(parse(''), 'nats://x:1').nats).toMatchObject({ servers: ['nats://x:1'], replicas: 1, leaseMs: 3000 });
    expect(() => withNatsFlag(parse(''), 'x:1')).toThrow(HubConfigError);
  });
});
