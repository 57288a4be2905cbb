// `tma hub add-host NAME [--ttl 15m] [--dir DIR] [--force]`: the host's token and entry as
// `tma hub token --host` makes them, plus a one-time enrolment code (hub/http/enrol.ts), and one
// line to paste on the new host. The line fetches the install script from this hub over its own
// TLS, pinned by the certificate's public key (curl -k --pinnedpubkey: the pin replaces the CA
// the new host does not have), so the token never travels unauthenticated and no file is copied.
// A refusal is itself a script (--fail-with-body hands it to sh) that says why and exits 1.

import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { expandHome, loadHubConfig, type HubConfig } from '../../hub/config/config.js';
import { codeFileName, publicKeyPin, type EnrolFile } from '../../hub/http/enrol.js';
import { UsageError, type Parsed } from '../args.js';
import type { HUB } from '../verb-flags.js';
import { ExitError } from '../local.js';
import { defaultHubConfigPath, defaultTokenDir, enrolDir } from '../hub-files.js';
import { checkName, runningHub } from './hub-config-file.js';
import { parseTtl } from './hub-pair.js';
import { addEntry } from './hub-token.js';

const DEFAULT_TTL = '15m';

export async function main(p: Parsed<typeof HUB>): Promise<number> {
  const env = process.env;
  if (p.positionals.length !== 2) throw new UsageError('tma hub add-host NAME [--ttl 15m]: one host name');
  const stray = (['host', 'client', 'role', 'print', 'name', 'json', 'show'] as const).find((k) => p.opts[k] !== undefined);
  if (stray) throw new UsageError(`--${stray} is not a flag of \`tma hub add-host\``);
  const name = checkName(p.positionals[1]!, 'host name');
  const ttlMs = parseTtl(p.opts.ttl ?? DEFAULT_TTL);
  const configPath = p.globals.config ?? defaultHubConfigPath(env);

  let config: HubConfig;
  try {
    config = loadHubConfig(configPath);
  } catch {
    throw new ExitError(`enrolment needs the hub to serve HTTPS, and ${configPath} does not load or has no [tls]: run \`tma hub tls\` first`, 2);
  }
  if (!config.tls) throw new ExitError(`enrolment needs the hub to serve HTTPS (the line pins its certificate): run \`tma hub tls\` first`, 2);
  const base = hubAddress(config, runningHub(configPath)?.url ?? null);

  const dir = resolve(expandHome(p.opts.dir ?? defaultTokenDir(env)));
  const file = join(dir, name);
  const entry = addEntry(p, env, { host: name, role: undefined, name, dir, file, token: randomBytes(32).toString('hex'), force: p.opts.force === true });

  const code = randomBytes(16).toString('hex');
  const expires = Date.now() + ttlMs;
  const codes = enrolDir(env);
  mkdirSync(codes, { recursive: true, mode: 0o700 });
  const record: EnrolFile = { schema: 1, host: name, token_file: file, expires_ms: expires, hub_url: base };
  writeFileSync(join(codes, codeFileName(code)), JSON.stringify(record), { mode: 0o600, flag: 'wx' });

  const pin = publicKeyPin(config.tls.cert);
  process.stdout.write(
    [
      entry.trimEnd(),
      '',
      `# on ${name}, within ${p.opts.ttl ?? DEFAULT_TTL} (the code works once): installs the collector, its token (0600) and a systemd user unit`,
      `curl -sS --fail-with-body -k --pinnedpubkey '${pin}' ${base}/v1/enrol/${code} | sh`,
      '',
    ].join('\n'),
  );
  return 0;
}

/** Where a new host reaches the hub: public_url when it is https, else the running hub's own address. */
function hubAddress(config: HubConfig, running: string | null): string {
  if (config.publicUrl?.startsWith('https://')) return config.publicUrl.replace(/\/+$/, '');
  const at = running ?? `https://${config.listen.host}:${config.listen.port}`;
  const u = new URL(at);
  // A hub on every address is reached by this machine's name (which its certificate should carry).
  if (u.hostname === '0.0.0.0' || u.hostname === '[::]') u.hostname = hostname();
  if (u.protocol !== 'https:') throw new ExitError(`the running hub at ${at} serves plain HTTP: restart it so it serves the certificate of [tls]`, 2);
  return u.origin;
}
