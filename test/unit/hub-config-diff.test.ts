import { describe, expect, it } from 'vitest';
import { parseHubConfig, type HubConfig } from '../../hub/config/config.js';
import { diffHubConfig, diffIsEmpty, diffSummary } from '../../hub/config/diff.js';

const parse = (text: string): HubConfig => parseHubConfig('/etc/tma/hub.toml', text, () => '');

const base = `
[[collector]]
host = "build1"
token = "tok-b1"
[[collector]]
host = "laptop"
token = "tok-lap"
[[client]]
name = "alice"
token = "tok-alice"
role = "operator"
[[client]]
name = "wall"
token = "tok-wall"
role = "viewer"
[[ssh]]
name = "gpu1"
host = "gpu1.internal"
user = "dev"
identity = "~/.ssh/id"
known_hosts = "~/.ssh/known_hosts"
[[ssh]]
name = "gpu3"
host = "gpu3.internal"
user = "dev"
identity = "~/.ssh/id"
known_hosts = "~/.ssh/known_hosts"
`;

describe('diffHubConfig', () => {
  it('the same file again changes nothing', () => {
    const d = diffHubConfig(parse(base), parse(base));
    expect(diffIsEmpty(d)).toBe(true);
    expect(diffSummary(d)).toBe('reload: no changes');
    expect(d.ssh.unchanged).toEqual(['gpu1', 'gpu3']);
  });

  it('public_url and [metrics] per_pane are applied live and named', () => {
    const d = diffHubConfig(parse(base), parse(`public_url = "https://fleet.lan"\n[metrics]\nper_pane = true\n${base}`));
    expect(d.liveChanged).toEqual(['public_url', 'metrics.per_pane']);
    expect(d.needsRestart).toEqual([]);
    expect(diffSummary(d)).toBe('reload: public_url, metrics.per_pane changed');
  });

  it('names what came, went and changed, and says it in one line', () => {
    const next =
      base
        .replace('host = "laptop"\ntoken = "tok-lap"', 'host = "laptop"\ntoken = "tok-lap-2"')
        .replace('[[collector]]\nhost = "build1"\ntoken = "tok-b1"\n', '')
        .replace('name = "wall"\ntoken = "tok-wall"\nrole = "viewer"', 'name = "wall"\ntoken = "tok-wall"\nrole = "operator"')
        .replace('name = "gpu1"\nhost = "gpu1.internal"', 'name = "gpu2"\nhost = "gpu2.internal"')
        .replace('name = "gpu3"\nhost = "gpu3.internal"\nuser = "dev"', 'name = "gpu3"\nhost = "gpu3.internal"\nuser = "ops"') +
      '[[client]]\nname = "bob"\ntoken = "tok-bob"\nrole = "viewer"\n[[client]]\nname = "carol"\ntoken = "tok-carol"\nrole = "viewer"\n';
    const d = diffHubConfig(parse(base), parse(next));
    expect(d.clients).toEqual({ added: ['bob', 'carol'], removed: [], tokenChanged: [], roleChanged: ['wall'] });
    expect(d.hostTokens).toEqual({ added: [], removed: ['build1'], changed: ['laptop'] });
    expect(d.ssh.added.map((s) => s.name)).toEqual(['gpu2']);
    expect(d.ssh.removed).toEqual(['gpu1']);
    expect(d.ssh.changed.map((s) => s.user)).toEqual(['ops']);
    expect(d.ssh.unchanged).toEqual([]);
    expect(d.notifyChanged).toBe(false);
    expect(diffSummary(d)).toBe('reload: +2 clients, ~1 client role, -1 host token, ~1 host token, ssh: +gpu2 -gpu1 ~gpu3');
  });

  it('a client whose token changed must lose the streams it opened; a removed one too', () => {
    const next = base.replace('token = "tok-alice"', 'token = "tok-alice-2"').replace('[[client]]\nname = "wall"\ntoken = "tok-wall"\nrole = "viewer"\n', '');
    const d = diffHubConfig(parse(base), parse(next));
    expect(d.clients).toEqual({ added: [], removed: ['wall'], tokenChanged: ['alice'], roleChanged: [] });
    expect(diffSummary(d)).toBe('reload: -1 client, ~1 client token');
  });

  it('a changed ssh command redials; notify sinks and restart-only settings are reported', () => {
    const next = `listen = "0.0.0.0:7480"\nstale_after_secs = 30\n${base.replace(
      'name = "gpu1"\nhost = "gpu1.internal"',
      'name = "gpu1"\ncommand = "/opt/tma collector --stdio"\nhost = "gpu1.internal"',
    )}[[notify]]\nname = "ops"\nkind = "webhook"\nurl = "http://127.0.0.1:9/hook"\n`;
    const d = diffHubConfig(parse(base), parse(next));
    expect(d.ssh.changed.map((s) => s.name)).toEqual(['gpu1']);
    expect(d.ssh.unchanged).toEqual(['gpu3']);
    expect(d.notifyChanged).toBe(true);
    expect(d.needsRestart).toEqual(['listen', 'stale_after_secs']);
    expect(diffSummary(d)).toBe('reload: ssh: ~gpu1, notify sinks replaced, listen, stale_after_secs changed (takes effect on restart)');
  });
});

describe('a hub.toml that does not load', () => {
  it('names the file and the line of a TOML error', () => {
    expect(() => parse('[[client]]\nname = "a"\nrole = [\n')).toThrow(/^\/etc\/tma\/hub\.toml: not valid TOML: .* \(line \d+\)$/);
  });
});
