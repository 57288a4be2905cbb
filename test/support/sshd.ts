// A real OpenSSH server on 127.0.0.1 for one test file: its own temp dir, host key, authorized
// client key and config, on a free high port. Nothing of the machine's own ssh setup is used or
// changed (except that /run/sshd must exist, as sshd insists on it).
//
//   const sshd = await startSshd();
//   try { … connect as sshd.user to 127.0.0.1:sshd.port with sshd.clientKey,
//          trusting sshd.knownHostsLine … } finally { sshd.stop(); }

import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { REPO } from './scratch-tmux.js';

const SSHD = '/usr/sbin/sshd';

export interface Sshd {
  port: number;
  /** The temp dir holding keys, config, log and the empty HOME of sessions. */
  dir: string;
  /** The login name the client key is authorized for (the user running the tests). */
  user: string;
  /** Private key path the server accepts. */
  clientKey: string;
  /** HOME of every session (SetEnv): empty, so no slow shell startup files run. */
  home: string;
  /** `[127.0.0.1]:PORT ssh-ed25519 AAAA…`: the line that makes this server known. */
  knownHostsLine: string;
  /** sshd's own log so far (for failure messages). */
  log(): string;
  /** Kill the server and every session it started (drops all connections); keeps the dir. */
  kill(): void;
  /** Start again on the same port with the same keys, after kill(). */
  restart(): Promise<void>;
  /** kill() and remove the dir. Safe to call twice. */
  stop(): void;
}

/** A fresh ed25519 key pair at `path` (and `path.pub`); returns the public line's `type base64`. */
export function makeKey(path: string): string {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', '', '-f', path], { stdio: 'ignore', timeout: 10_000 });
  return readFileSync(`${path}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
}

/** Resolves true once something accepts TCP on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/** Every process whose parent chain leads to `root`, deepest last. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      // The command name may hold spaces and parentheses; fields resume after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(d), ppid);
    } catch {
      // The process ended while we looked.
    }
  }
  const out: number[] = [];
  let frontier = [root];
  while (frontier.length) {
    const next: number[] = [];
    for (const [pid, pp] of parent) if (frontier.includes(pp) && !out.includes(pid)) next.push(pid);
    out.push(...next);
    frontier = next;
  }
  return out;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

export async function startSshd(): Promise<Sshd> {
  if (!existsSync(SSHD)) throw new Error(`${SSHD} is missing: apt-get install openssh-server`);
  mkdirSync('/run/sshd', { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'tma-sshd-'));
  let pid: number | null = null;
  let port = 0;
  const logFile = join(dir, 'sshd.log');
  const home = join(dir, 'home');

  const kill = () => {
    if (pid === null) return;
    const root = pid;
    pid = null;
    // Sessions are started in sessions of their own, so only the parent chain finds them all.
    const kids = descendants(root);
    killQuietly(root);
    for (const k of kids) killQuietly(k);
  };
  const stop = () => {
    kill();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    mkdirSync(home);
    const hostKey = join(dir, 'host_ed25519');
    const hostPub = makeKey(hostKey);
    const clientKey = join(dir, 'client_ed25519');
    const clientPub = makeKey(clientKey);
    writeFileSync(join(dir, 'authorized_keys'), `${clientPub}\n`);
    const config = join(dir, 'sshd_config');

    const launch = async (): Promise<boolean> => {
      writeFileSync(
        config,
        [
          `Port ${port}`,
          'ListenAddress 127.0.0.1',
          `HostKey ${hostKey}`,
          `PidFile ${join(dir, 'sshd.pid')}`,
          `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
          'PubkeyAuthentication yes',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'UsePAM no',
          'StrictModes no',
          'PermitRootLogin prohibit-password',
          `SetEnv HOME=${home}`,
          'AllowTcpForwarding no',
          'X11Forwarding no',
          'PrintMotd no',
          'LogLevel VERBOSE',
          '',
        ].join('\n'),
      );
      // -D keeps it in the foreground as our child, so its pid is known without racing PidFile.
      const child = spawn(SSHD, ['-D', '-f', config, '-E', logFile], { stdio: 'ignore' });
      pid = child.pid ?? null;
      let exited = false;
      child.once('exit', () => (exited = true));
      const end = Date.now() + 10_000;
      while (Date.now() < end) {
        if (exited) {
          pid = null;
          return false;
        }
        if (await accepts(port)) return true;
        await new Promise((r) => setTimeout(r, 25));
      }
      kill();
      throw new Error(`sshd did not start listening on ${port}:\n${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}`);
    };

    // Another process may take the probed port before sshd binds it: pick again.
    for (let tries = 0; ; tries++) {
      port = await freePort();
      if (await launch()) break;
      if (tries >= 4) throw new Error(`sshd would not start:\n${readFileSync(logFile, 'utf8')}`);
    }

    return {
      port,
      dir,
      user: userInfo().username,
      clientKey,
      home,
      knownHostsLine: `[127.0.0.1]:${port} ${hostPub}`,
      log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
      kill,
      restart: async () => {
        kill();
        if (!(await launch())) throw new Error(`sshd would not restart on ${port}:\n${readFileSync(logFile, 'utf8')}`);
      },
      stop,
    };
  } catch (e) {
    stop();
    throw e;
  }
}

/**
 * The script a test hub runs over ssh: this repository's collector on `--stdio` for one scratch
 * tmux server, with the test's private state dirs and a heartbeat as fast as the test hub's.
 */
export function writeRemoteCollector(dir: string, socketName: string, heartbeatMs: number): string {
  const wrapper = join(dir, 'remote-collector.sh');
  const tmuxTmp = process.env.TMUX_TMPDIR ? `export TMUX_TMPDIR='${process.env.TMUX_TMPDIR}'\n` : '';
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexport TMUX= XDG_RUNTIME_DIR='${dir}/run' XDG_CONFIG_HOME='${dir}/cfg' XDG_STATE_HOME='${dir}/state' TMA_COLLECTOR_HEARTBEAT_MS=${heartbeatMs}\n${tmuxTmp}` +
      `exec '${process.execPath}' '${join(REPO, 'bin/tma.js')}' collector --stdio --socket-name '${socketName}' --interval 0.3 --host-name build1\n`,
  );
  chmodSync(wrapper, 0o755);
  return wrapper;
}
