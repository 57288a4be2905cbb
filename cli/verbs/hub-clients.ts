// `tma hub clients [--json]`: the client tokens hub.toml lists (paired devices among them), with
// when the hub last saw each (the state file it keeps, hub/http/clients-seen.ts) and when a paired
// token expires. `tma hub revoke NAME`: its entry taken out of hub.toml, the rest of the file as
// it was; the running hub reloads, refuses the token and ends the streams it opened.

import { rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { HubConfigError, loadHubConfig } from '../../hub/config/config.js';
import { readClientsSeen } from '../../hub/http/clients-seen.js';
import { UsageError, type Parsed } from '../args.js';
import type { HUB } from '../verb-flags.js';
import { ExitError } from '../local.js';
import { toJsonLine } from '../../shared/row.js';
import { safeText } from '../../shared/terminal-text.js';
import { clientsSeenPath, defaultHubConfigPath, defaultTokenDir } from '../hub-files.js';
import { listedTokenFile, removeClientEntry, runningHub, signalReload, writeConfigAtomically } from './hub-config-file.js';

export function ago(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 129_600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

function clients(p: Parsed<typeof HUB>, configPath: string, env: NodeJS.ProcessEnv): number {
  let config;
  try {
    config = loadHubConfig(configPath);
  } catch (e) {
    if (e instanceof HubConfigError) throw new ExitError(e.message, 1);
    throw e;
  }
  const seen = readClientsSeen(clientsSeenPath(env));
  const now = Date.now();
  const list = config.clients.map((c) => ({ name: c.name, role: c.role, last_seen_ms: seen[c.name] ?? null, expires_ms: c.expiresAt ?? null }));
  if (p.opts.json === true) {
    process.stdout.write(`${toJsonLine({ schema: 1, clients: list })}\n`);
    return 0;
  }
  if (!list.length) {
    process.stdout.write(`no clients in ${configPath}; pair a device: tma hub pair\n`);
    return 0;
  }
  // A name is any string hub.toml holds (up to 128 characters): shown, never obeyed.
  const rows = list.map((c) => [
    safeText(c.name),
    c.role,
    c.last_seen_ms === null ? 'never' : ago(c.last_seen_ms, now),
    c.expires_ms === null ? '-' : c.expires_ms <= now ? 'expired' : new Date(c.expires_ms).toISOString(),
  ]);
  const all = [['NAME', 'ROLE', 'LAST SEEN', 'EXPIRES'], ...rows];
  const widths = all[0]!.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  for (const r of all) process.stdout.write(`${r.map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i]!))).join('  ')}\n`);
  return 0;
}

function revoke(name: string, configPath: string, env: NodeJS.ProcessEnv): number {
  let text: string;
  try {
    text = readFileSync(configPath, 'utf8');
  } catch (e) {
    throw new ExitError(`cannot read ${configPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 1);
  }
  const tokenFile = listedTokenFile(configPath, text, 'client', name);
  if (tokenFile === null) throw new ExitError(`no client ${name} in ${configPath} (tma hub clients lists them)`, 2);
  writeConfigAtomically(configPath, removeClientEntry(configPath, text, name));
  // A token file tma minted (in its own tokens folder) goes too; one kept elsewhere is the user's.
  const removed = tokenFile !== '' && dirname(tokenFile) === resolve(defaultTokenDir(env));
  if (removed) rmSync(tokenFile, { force: true });
  const running = runningHub(configPath);
  if (running) signalReload(running);
  process.stdout.write(
    `client ${name} removed from ${configPath}${removed ? ` and its token file ${tokenFile} deleted` : ''}; ` +
      `${running ? `the running hub (pid ${running.pid}) was told to reload: it refuses the token and ends its streams` : 'no hub runs for it now'}\n`,
  );
  return 0;
}

export async function main(p: Parsed<typeof HUB>): Promise<number> {
  const env = process.env;
  const [sub, ...rest] = p.positionals;
  const configPath = p.globals.config ?? defaultHubConfigPath(env);
  const stray = (['host', 'client', 'role', 'dir', 'print', 'ttl', 'name', 'force', 'show', ...(sub === 'revoke' ? (['json'] as const) : [])] as const).find(
    (k) => p.opts[k] !== undefined,
  );
  if (stray) throw new UsageError(`--${stray} is not a flag of \`tma hub ${sub}\``);
  if (sub === 'clients') {
    if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}"`);
    return clients(p, configPath, env);
  }
  if (rest.length !== 1) throw new UsageError('tma hub revoke NAME: one client name (tma hub clients lists them)');
  return revoke(rest[0]!, configPath, env);
}
