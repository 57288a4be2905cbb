// A hub and a collector as two hosts would run them: `tma hub --no-local` from a hub.toml with
// one host token and one operator token (written by `tma hub token`), and `tma collector --hub
// ws://…` following one scratch tmux server under the host name `agents1`, with no config.toml
// of its own — the defaults a new user gets.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/ports.js';
import { REPO, tma, waitFor, type CliResult } from '../support/scratch-tmux.js';
import type { AgentTmux } from './agent-tmux.js';

export const HOST = 'agents1';

export interface Fleet {
  url: string;
  /** The operator's token file. */
  operator: string;
  /** `tma --hub URL --token-file OP …` as the operator. */
  run(args: string[]): Promise<CliResult>;
  stop(): Promise<void>;
  log(): string;
}

export async function startFleet(server: AgentTmux): Promise<Fleet> {
  const dir = mkdtempSync(join(tmpdir(), 'tma-agents-fleet-'));
  const env = {
    ...process.env,
    TMUX: '',
    TMUX_PANE: '',
    TMA_HUB: '',
    TMA_HUB_TOKEN: '',
    XDG_CONFIG_HOME: join(dir, 'cfg'),
    XDG_RUNTIME_DIR: join(dir, 'run'),
    XDG_CACHE_HOME: join(dir, 'cache'),
  };
  const token = (args: string[]) => {
    const r = spawnSync(process.execPath, [join(REPO, 'bin/tma.js'), 'hub', 'token', ...args, '--dir', dir], { env, encoding: 'utf8', timeout: 20_000 });
    if (r.status !== 0) throw new Error(`tma hub token ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const port = await freePort();
  writeFileSync(join(dir, 'hub.toml'), `${token(['--host', HOST])}\n${token(['--client', 'op', '--role', 'operator'])}`);
  const children: ChildProcess[] = [];
  let out = '';
  const start = (args: string[], extra: Record<string, string> = {}) => {
    const c = spawn(process.execPath, [join(REPO, 'bin/tma.js'), ...args], { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (out += d));
    children.push(c);
    return c;
  };
  start(['hub', '--no-local', '--listen', `127.0.0.1:${port}`, '--config', join(dir, 'hub.toml')]);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(() => out.includes('listening on'), 'the hub listening', 20_000);
  // The collector's own XDG dirs: no config.toml, as on a host set up a minute ago.
  start(['collector', '--hub', `ws://127.0.0.1:${port}`, '--token-file', join(dir, HOST), '--host-name', HOST], {
    ...server.env,
    XDG_CONFIG_HOME: join(dir, 'collector-cfg'),
    XDG_RUNTIME_DIR: join(dir, 'collector-run'),
  });
  const operator = join(dir, 'op');
  const fleet: Fleet = {
    url,
    operator,
    run: (args) => tma(['--hub', url, '--token-file', operator, ...args], { env: { XDG_CONFIG_HOME: join(dir, 'cli-cfg') }, timeoutMs: 20_000 }),
    log: () => out,
    stop: async () => {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((r) => {
              if (c.exitCode !== null || c.signalCode !== null) return r();
              const t = setTimeout(() => c.kill('SIGKILL'), 5000);
              c.once('exit', () => {
                clearTimeout(t);
                r();
              });
              c.kill('SIGTERM');
            }),
        ),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return fleet;
}
