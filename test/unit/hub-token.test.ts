import { mkdtempSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/args.js';
import { checkName, clientEntryText, hostEntryText } from '../../cli/verbs/hub-token.js';
import { loadHubConfig, parseHubConfig } from '../../hub/config/config.js';
import { tokenFileWarning } from '../../shared/token-file-mode.js';

describe('tma hub token output', () => {
  it('a host entry is valid hub.toml as printed, comments and all, and binds the host to the file', () => {
    const text = hostEntryText('gpu-1.lab', '/home/dev/.config/tma/tokens/gpu-1.lab', 'ws://hub:7480', 'a note');
    const read = (p: string) => (p === '/home/dev/.config/tma/tokens/gpu-1.lab' ? 'tok-x\n' : '');
    const c = parseHubConfig('/etc/tma/hub.toml', text, read);
    expect(c.collectors).toEqual([{ host: 'gpu-1.lab', token: 'tok-x' }]);
    expect(text).toContain('tma collector --hub ws://hub:7480 --token-file /home/dev/.config/tma/tokens/gpu-1.lab --host-name gpu-1.lab');
  });

  it('for a hub with its own certificate, the collector command trusts it with --hub-ca', () => {
    const text = hostEntryText('b2', '/t/b2', 'wss://hub.lan:7480', '', undefined, '/home/dev/.config/tma/tls/hub.crt');
    expect(text).toContain('# on b2, with the token file copied to the same path (mode 0600) and the hub certificate too, run:\n');
    expect(text).toContain('#   tma collector --hub wss://hub.lan:7480 --hub-ca /home/dev/.config/tma/tls/hub.crt --token-file /t/b2 --host-name b2\n');
  });

  it('a client entry carries the role', () => {
    const text = clientEntryText('ann', 'viewer', '/t/ann with "quotes"');
    const c = parseHubConfig('/etc/tma/hub.toml', text, (p) => (p === '/t/ann with "quotes"' ? 'tok-ann' : ''));
    expect(c.clients).toEqual([{ name: 'ann', token: 'tok-ann', role: 'viewer' }]);
  });

  it('names follow the hub config rule and never climb out of the token folder', () => {
    expect(checkName('build_1.lan', 'host name')).toBe('build_1.lan');
    for (const bad of ['', '..', '.', 'a/b', 'a b', 'x'.repeat(254)]) expect(() => checkName(bad, 'host name')).toThrow(UsageError);
  });
});

describe('token files others can read', () => {
  it('are named with the fix, and the hub config loader reports them without refusing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tma-tokmode-'));
    try {
      const loose = join(dir, 'loose');
      const tight = join(dir, 'tight');
      writeFileSync(loose, 'tok-loose\n');
      chmodSync(loose, 0o644);
      writeFileSync(tight, 'tok-tight\n', { mode: 0o600 });
      expect(statSync(tight).mode & 0o777).toBe(0o600);
      expect(tokenFileWarning(loose)).toBe(`token file ${loose} is readable by other users (mode 0644); fix: chmod 600 ${loose}`);
      expect(tokenFileWarning(tight)).toBeNull();
      const hubToml = join(dir, 'hub.toml');
      writeFileSync(hubToml, '[[collector]]\nhost = "a"\ntoken_file = "loose"\n[[collector]]\nhost = "b"\ntoken_file = "tight"\n');
      const warnings: string[] = [];
      const c = loadHubConfig(hubToml, (w) => warnings.push(w));
      expect(c.collectors.map((x) => x.token)).toEqual(['tok-loose', 'tok-tight']);
      expect(warnings).toEqual([tokenFileWarning(loose)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
