// How `tma hub token` finds the hub to reload and the entry already listed: a pid file naming a
// dead process or a process that is not a hub is no hub; a listed token_file resolves as the hub
// resolves it.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hubPidFile, listedTokenFile, runningHub, writePidFile } from '../../cli/verbs/hub-config-file.js';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

describe('the hub pid file', () => {
  it('is written beside the config and removed only by the hub that wrote it', () => {
    dir = mkdtempSync(join(tmpdir(), 'tma-pidfile-'));
    const config = join(dir, 'hub.toml');
    const w = writePidFile(config, 'http://127.0.0.1:7480');
    expect('remove' in w).toBe(true);
    expect(hubPidFile(config)).toBe(join(dir, 'hub.pid'));
    // This test process is alive but is not `tma hub`: not a hub to signal.
    expect(runningHub(config)).toBeNull();
    // Another hub wrote it since: this one's exit leaves it; a dead pid is no hub.
    writeFileSync(hubPidFile(config), '999999999\nhttp://x\n');
    if ('remove' in w) w.remove();
    expect(existsSync(hubPidFile(config))).toBe(true);
    expect(runningHub(config)).toBeNull();
    const mine = writePidFile(config, 'http://127.0.0.1:7480');
    if ('remove' in mine) mine.remove();
    expect(existsSync(hubPidFile(config))).toBe(false);
  });

  it('names a live `… hub …` process with its URL', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tma-pidfile-'));
    const config = join(dir, 'hub.toml');
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)', 'hub'], { stdio: 'ignore' });
    try {
      await new Promise((r) => child.once('spawn', r));
      writeFileSync(hubPidFile(config), `${child.pid}\nhttp://127.0.0.1:9\n`);
      expect(runningHub(config)).toEqual({ pid: child.pid, url: 'http://127.0.0.1:9' });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('a config without a writable folder says so instead of failing the hub', () => {
    expect(writePidFile('/nonexistent-tma-dir/hub.toml', 'http://x')).toEqual({
      error: 'cannot write /nonexistent-tma-dir/hub.pid: ENOENT; `tma hub token` will not reload this hub',
    });
  });
});

describe('listedTokenFile', () => {
  const text =
    '[[collector]]\nhost = "b1"\ntoken_file = "tokens/b1"\n[[collector]]\nhost = "b2"\ntoken = "t"\n[[client]]\nname = "b1"\ntoken_file = "/abs/ann"\nrole = "viewer"\n';
  it('resolves relative files against the config folder, as the hub does', () => {
    expect(listedTokenFile('/etc/tma/hub.toml', text, 'collector', 'b1')).toBe('/etc/tma/tokens/b1');
    expect(listedTokenFile('/etc/tma/hub.toml', text, 'client', 'b1')).toBe('/abs/ann');
    expect(listedTokenFile('/etc/tma/hub.toml', text, 'collector', 'b2')).toBe('');
    expect(listedTokenFile('/etc/tma/hub.toml', text, 'collector', 'b3')).toBeNull();
    expect(listedTokenFile('/etc/tma/hub.toml', 'oops = [', 'collector', 'b1')).toBeNull();
  });
});
