// Where tma's own files live, decided once (shared/config-dir.ts) for every reader: config.toml,
// hub.toml and its tokens, user manifests and the install state.

import { describe, expect, it } from 'vitest';
import { configPath } from '../../collector/config/load-config.js';
import { userManifestDir } from '../../collector/manifest-dirs.js';
import { configDir } from '../../cli/install/paths.js';
import { defaultHubConfigPath, defaultTokenDir, defaultTokenFile } from '../../cli/hub-files.js';
import { hostLabel } from '../../shared/host-label.js';
import { installStateDir, tmaConfigDir } from '../../shared/config-dir.js';

const readers = (env: NodeJS.ProcessEnv) => [
  configPath(undefined, env).path,
  defaultHubConfigPath(env),
  defaultTokenDir(env),
  defaultTokenFile(env),
  userManifestDir(env),
  configDir(env),
];

describe('tma config dir', () => {
  it('every reader sits in $XDG_CONFIG_HOME/tma, else ~/.config/tma', () => {
    expect(readers({ XDG_CONFIG_HOME: '/cfg', HOME: '/home/u' }).map((p) => p.slice(0, 8))).toEqual(Array(6).fill('/cfg/tma'));
    expect(readers({ HOME: '/home/u' }).every((p) => p.startsWith('/home/u/.config/tma'))).toBe(true);
  });

  it('a relative or empty XDG_CONFIG_HOME is ignored by every reader alike', () => {
    for (const xdg of ['relative', '']) {
      expect(readers({ XDG_CONFIG_HOME: xdg, HOME: '/home/u' }).every((p) => p.startsWith('/home/u/.config/tma'))).toBe(true);
    }
  });

  it('TMA_CONFIG_DIR moves the install state only; --config-dir beats it', () => {
    const env = { HOME: '/home/u', TMA_CONFIG_DIR: '/state' };
    expect(installStateDir(env)).toBe('/state');
    expect(configDir(env)).toBe('/state');
    expect(installStateDir(env, '/flag')).toBe('/flag');
    expect(installStateDir({ ...env, TMA_CONFIG_DIR: '' })).toBe(tmaConfigDir(env));
    expect(configPath(undefined, env).path).toBe('/home/u/.config/tma/config.toml');
    expect(defaultHubConfigPath(env)).toBe('/home/u/.config/tma/hub.toml');
  });
});

describe('host label', () => {
  it('keeps what the hub accepts, dashes the rest, cuts at 253, never empty', () => {
    expect(hostLabel('gpu1.lan')).toBe('gpu1.lan');
    expect(hostLabel('my box (2)')).toBe('my-box--2-');
    expect(hostLabel('x'.repeat(300))).toHaveLength(253);
    expect(hostLabel('')).toBe('localhost');
  });
});
