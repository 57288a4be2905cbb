// `tma hub`: the fleet hub, and (unless --no-local) a collector for this machine's own tmux
// servers attached to it in-process. Without a hub.toml it runs on loopback with one operator
// token it writes for this user, so the first run needs no setup at all.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_LISTEN, DEFAULT_LOST_AFTER_MS, HubConfigError, loadHubConfig, parseListen, withNatsFlag, type HubConfig } from '../../hub/config/config.js';
import { reloadOnSignal } from '../../hub/config/reload.js';
import { startHub, type Hub } from '../../hub/server.js';
import { linkPair } from '../../shared/link.js';
import type { LineLog } from '../../shared/log-level.js';
import { backoffDelay, DEFAULT_BACKOFF } from '../../shared/backoff.js';
import type { Publisher } from '../../collector/fleet/publisher.js';
import { hostName } from '../../collector/tmux/host.js';
import { UsageError, type Parsed } from '../args.js';
import type { HUB } from '../verb-flags.js';
import { assembleCollector, IDLE_SWEEP_MS, WATCHED_SWEEP_MS } from '../collector-assembly.js';
import { clientsSeenPath, defaultHubConfigPath, enrolDir, hubStateDir, localToken, readLocalToken, withDefaultFleetKey } from '../hub-files.js';
import { packageFile } from '../install/paths.js';
import { writePidFile } from './hub-config-file.js';
import { ExitError, guard } from '../local.js';
import { logLevelOf } from '../log-setup.js';
import { VERSION } from '../version.js';
import { createLogger } from '../../shared/log.js';
import { hostLabel } from '../../shared/host-label.js';

/** Where the hub journals fleet notifications, so a restart neither loses nor repeats one. */
function notifyJournalPath(env: NodeJS.ProcessEnv): string {
  return join(hubStateDir(env), 'hub-notifications.jsonl');
}

function zeroConfig(token: string): HubConfig {
  return {
    listen: parseListen(DEFAULT_LISTEN),
    staleAfterMs: null,
    lostAfterMs: DEFAULT_LOST_AFTER_MS,
    collectors: [],
    clients: [{ name: 'local', token, role: 'operator' }],
    ssh: [],
  };
}

/**
 * The embedded collector's in-process link, paired again whenever it ends (the hub dropped it as
 * silent after a suspend, or refused what it sent), as a remote collector would redial: otherwise
 * this machine's own rows would stay stale until the hub restarts.
 */
export function attachLocalCollector(
  hub: Pick<Hub, 'attachLink'>,
  publisher: Pick<Publisher, 'attach'>,
  host: string,
  random: () => number = Math.random,
): { stop(): void } {
  let stopped = false;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let current: object | null = null;
  const connect = () => {
    timer = null;
    if (stopped) return;
    const [collectorEnd, hubEnd] = linkPair();
    current = collectorEnd;
    collectorEnd.onMessage(() => (attempt = 0));
    collectorEnd.onClose(() => {
      if (stopped || current !== collectorEnd) return;
      timer = setTimeout(connect, backoffDelay(attempt++, DEFAULT_BACKOFF, random));
    });
    hub.attachLink(hubEnd, { transport: 'local', host });
    publisher.attach(collectorEnd);
  };
  connect();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

export async function main(p: Parsed<typeof HUB>): Promise<number> {
  const env = process.env;
  const sub = p.positionals[0];
  if (sub === 'token') return (await import('./hub-token.js')).main(p);
  if (sub === 'add-host') return (await import('./hub-add-host.js')).main(p);
  if (sub === 'tls') return (await import('./hub-tls.js')).main(p);
  if (sub === 'pair') return (await import('./hub-pair.js')).main(p);
  if (sub === 'clients' || sub === 'revoke') return (await import('./hub-clients.js')).main(p);
  const stray = (['host', 'client', 'role', 'dir', 'force', 'print', 'name', 'ttl', 'json', 'show'] as const).find((k) => p.opts[k] !== undefined);
  if (stray) throw new UsageError(`--${stray} belongs to a subcommand (\`tma hub token|add-host|tls|pair|clients|revoke\`)`);
  const listen = p.opts.listen;
  const noLocal = p.opts['no-local'] === true;
  if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const level = logLevelOf(p, env);
  return guard(async () => {
    const explicit = p.globals.config;
    const path = explicit ?? defaultHubConfigPath(env);
    let config: HubConfig;
    let tokenNote: string | null = null;
    let pageToken: string | null = null;
    const configFile = explicit || existsSync(path) ? path : null;
    // From here on a SIGHUP reloads (once the hub is up) instead of ending the process. A
    // zero-config hub watches the default path too: `tma hub token` creates the file and signals.
    // --nats stands over the file's [nats] on every reload too, so a SIGHUP does not drop it.
    const natsFlag = p.opts.nats;
    const load = (f: string, w: (line: string) => void) =>
      withDefaultFleetKey(natsFlag === undefined ? loadHubConfig(f, w) : withNatsFlag(loadHubConfig(f, w), natsFlag), f, w);
    const reloader = reloadOnSignal(path, load, configFile === null);
    const warnings: string[] = [];
    try {
      if (configFile) {
        config = loadHubConfig(configFile, (w) => warnings.push(w));
        // The page link needs a client token: the zero-config one, when the file still lists it.
        const local = readLocalToken(env);
        if (local && config.clients.some((c) => c.token === local.token)) {
          pageToken = local.token;
          tokenNote = local.file;
        }
      } else {
        const local = localToken(env);
        config = zeroConfig(local.token);
        pageToken = local.token;
        tokenNote = local.file;
      }
      if (natsFlag !== undefined) config = withNatsFlag(config, natsFlag);
      config = withDefaultFleetKey(config, path, (w) => warnings.push(w));
    } catch (e) {
      if (e instanceof HubConfigError) throw new ExitError(e.message, 1);
      throw e;
    }

    let hub;
    try {
      const logger = await createLogger({ name: 'tma-hub', level });
      hub = await startHub({
        config,
        ...(listen ? { listen } : {}),
        notifyJournal: notifyJournalPath(env),
        clientsSeenFile: clientsSeenPath(env),
        enrol: { dir: enrolDir(env), files: packageFile('dist/single') },
        logger,
        version: VERSION,
      });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new ExitError(`cannot listen on ${listen ?? 'the configured address'}: address in use`, 1);
      if (e instanceof HubConfigError) throw new UsageError(e.message);
      throw e;
    }
    for (const w of warnings) hub.logger.warn(w);
    reloader.attach(hub);

    let stopLocal: () => void = () => undefined;
    if (!noLocal) {
      // The embedded collector reads config.toml as usual; --config named the hub's file here.
      const collectorArgs: Parsed = { ...p, globals: { ...p.globals, config: undefined } };
      const host = hostLabel(hostName());
      const log: LineLog = (line, lvl = 'info') => hub.logger[lvl]({ host }, `local collector: ${line}`);
      const { publisher, engines } = await assembleCollector(collectorArgs, {
        host,
        intervalMs: 1000,
        idleMs: IDLE_SWEEP_MS,
        sweepMs: WATCHED_SWEEP_MS,
        env,
        log,
      });
      const local = attachLocalCollector(hub, publisher, host);
      await engines.start();
      stopLocal = () => {
        local.stop();
        publisher.close();
        engines.stop();
      };
    }

    // Beside the config: how `tma hub token` finds this hub to make it reload what it added.
    const pid = writePidFile(path, hub.url);
    if ('error' in pid) hub.logger.warn(pid.error);

    process.stdout.write(`tma hub: listening on ${hub.url}\n`);
    // The page link people open: at public_url when hub.toml names one.
    const page = config.publicUrl ?? hub.url;
    if (pageToken) {
      process.stdout.write(`tma hub: fleet view: ${page}/#token=${pageToken}\n`);
      // With [tls], the same commands trust the hub's own certificate.
      const ca = config.tls?.certFile;
      process.stdout.write(
        `tma hub: token in ${tokenNote}; try: curl${ca ? ` --cacert ${ca}` : ''} -H "Authorization: Bearer $(cat ${tokenNote})" ${hub.url}/v1/agents\n`,
      );
      process.stdout.write(`tma hub: or: node bin/tma.js --hub ${hub.url}${ca ? ` --hub-ca ${ca}` : ''} ls\n`);
    } else {
      process.stdout.write(`tma hub: fleet view: ${page}/ (sign in with a client token; mint one: tma hub token --client NAME --role viewer)\n`);
    }

    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    reloader.stop();
    if (!('error' in pid)) pid.remove();
    stopLocal();
    await hub.close();
    return 0;
  });
}
