// A real hub process (`bin/tma.js hub`) on a fixed loopback port with its own state folder, for
// tests that kill it with SIGKILL and start it again on the same journal.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './scratch-tmux.js';

export interface HubProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
}

/** Write `hub.toml` (the listen line is added) into `dir` and start a hub on it. */
export async function startHubProcess(dir: string, port: number, tomlBody: string): Promise<HubProcess> {
  writeFileSync(join(dir, 'hub.toml'), `listen = "127.0.0.1:${port}"\n${tomlBody}`);
  const env = { ...process.env, XDG_STATE_HOME: join(dir, 'hub-state'), XDG_CONFIG_HOME: join(dir, 'hub-cfg') };
  const child = spawn(process.execPath, [join(REPO, 'bin/tma.js'), 'hub', '--no-local', '--config', join(dir, 'hub.toml')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + 60_000;
  for (;;) {
    const up = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`hub did not come up: ${out.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    output: () => out,
    kill: () =>
      new Promise<void>((ok) => {
        if (child.exitCode !== null || child.signalCode !== null) return ok();
        child.once('exit', () => ok());
        child.kill('SIGKILL');
      }),
  };
}

/** Resident memory of a process in bytes (Linux). */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}
