// The ssh side of `tma --hub … jump`: where a host is reached (this machine's `[hosts.NAME]`, else
// the hub's `[[ssh]]` entry), and the command line that lands on the pane there. Pure but for
// asking the hub.

import type { Config } from '../../collector/config/config-types.js';
import type { FleetRow } from '../../shared/fleet.js';
import { parseLocator } from '../../shared/jump-plan.js';
import { ExitError } from '../local.js';
import { getJson, type HubTarget } from './hub-client.js';

export interface SshWay {
  destination: string;
  options: string[];
  from: 'config' | 'hub';
}

/** POSIX shell quoting, for the remote command line and for printing. */
export const shq = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

/** The tmux command the far side runs: attach to the pane's session, its window and pane current. */
export function remoteAttach(row: Pick<FleetRow, 'server' | 'pane' | 'locator'>): string[] {
  const loc = parseLocator(row.locator);
  if (!loc) throw new ExitError(`pane ${row.pane} has no session:window.pane locator (${JSON.stringify(row.locator)})`, 1);
  const session = `=${loc.session}`;
  return [
    'tmux',
    '-S',
    row.server,
    'attach-session',
    '-t',
    session,
    ';',
    'select-window',
    '-t',
    `${session}:${loc.window}`,
    ';',
    'select-pane',
    '-t',
    row.pane,
  ];
}

/** `ssh -t [options] DEST 'remote command'`: one argv, the remote command as one quoted word list. */
export function sshArgv(way: SshWay, row: Pick<FleetRow, 'server' | 'pane' | 'locator'>): string[] {
  // `\;` rather than `';'`: the remote shell reads it the same, and the printed line stays readable.
  return [
    'ssh',
    '-t',
    ...way.options,
    way.destination,
    remoteAttach(row)
      .map((a) => (a === ';' ? '\\;' : shq(a)))
      .join(' '),
  ];
}

export async function sshWay(t: HubTarget, config: Pick<Config, 'hosts'>, host: string): Promise<SshWay | null> {
  const mine = config.hosts?.[host];
  if (mine) return { destination: mine.ssh, options: mine.sshOptions, from: 'config' };
  const got = await getJson<{ ssh: { user: string; host: string; port: number } | null }>(t, `/v1/hosts/${encodeURIComponent(host)}/ssh`).catch(() => null);
  const s = got?.ssh;
  if (!s) return null;
  return { destination: `${s.user}@${s.host}`, options: s.port === 22 ? [] : ['-p', String(s.port)], from: 'hub' };
}

export const HOW_TO_ADD = (host: string) =>
  `no ssh destination for host ${host}: add to ~/.config/tma/config.toml\n  [hosts.${host}]\n  ssh = "user@${host}"\nor give the hub an [[ssh]] entry for it`;
