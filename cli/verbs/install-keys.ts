// `tma install-keys [--mouse] [--check] [--uninstall] [--yes]`: tma's key bindings in a file of
// their own, sourced by one marked line in your tmux.conf. tmux is only read (`list-keys`, to see
// which keys are the person's own); no binding of theirs is ever replaced: a taken key is named,
// and a free one offered instead (taken with --yes) or the binding left out.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  BINDING_WORDS,
  confBindings,
  confLineProblems,
  DEFAULT_KEYS,
  keyMapOf,
  KEYS_MARKER,
  planConfAdd,
  planConfRemove,
  planKeys,
  renderManaged,
  serverBindings,
  sourceLine,
  type KeyMap,
} from '../../collector/install/keys.js';
import { openRunner } from '../../collector/tmux/runner.js';
import { tmuxBin } from '../../collector/tmux/target.js';
import { UsageError, type Parsed } from '../args.js';
import type { INSTALL_KEYS } from '../verb-flags.js';
import { applyFile, ask, closePrompts, InstallError, readOr } from '../install/apply.js';
import { configDir, configDirPinned, home, packageFile, tmaBin, type Env } from '../install/paths.js';
import { ExitError, guard, targetOf } from '../local.js';

export function tmuxConf(env: Env, flagPath?: string): { path: string; created: boolean } {
  if (flagPath) return { path: flagPath, created: !existsSync(flagPath) };
  const h = home(env);
  const xdg = env.XDG_CONFIG_HOME ? join(env.XDG_CONFIG_HOME, 'tmux', 'tmux.conf') : null;
  const dotConfig = join(h, '.config', 'tmux', 'tmux.conf');
  for (const c of [join(h, '.tmux.conf'), xdg, dotConfig]) if (c && existsSync(c)) return { path: c, created: false };
  const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
  return { path: xdg ?? (isDir(join(h, '.config')) ? dotConfig : join(h, '.tmux.conf')), created: true };
}

export interface KeysOpts {
  mouse: boolean;
  yes: boolean;
  noDaemon: boolean;
  conf?: string | undefined;
  configDir?: string | undefined;
  /** The running server's `list-keys -T prefix` output; null when there is no server to ask. */
  listKeys?: () => Promise<string | null>;
}

function where(env: Env, o: KeysOpts) {
  const dir = configDir(env, o.configDir);
  const managed = join(dir, 'tmux.conf');
  return { managed, line: sourceLine(configDirPinned(env, o.configDir) ? managed : null), conf: tmuxConf(env, o.conf) };
}

export function keysProblems(env: Env, o: KeysOpts): string[] {
  const w = where(env, o);
  const bin = tmaBin(env);
  const problems: string[] = [];
  const managed = existsSync(w.managed) ? readFileSync(w.managed, 'utf8') : null;
  const keys = (managed !== null ? keyMapOf(managed) : null) ?? DEFAULT_KEYS;
  const ok = o.mouse ? [renderManaged(bin, true, keys)] : [renderManaged(bin, false, keys), renderManaged(bin, true, keys)];
  if (managed === null) problems.push(`${w.managed} is missing`);
  else if (!ok.includes(managed)) problems.push(`${w.managed} is stale${o.mouse ? ' or has no mouse bindings' : ''}; run \`tma install-keys\``);
  const conf = existsSync(w.conf.path) ? readFileSync(w.conf.path, 'utf8') : '';
  problems.push(...confLineProblems(conf, w.line, w.conf.path));
  return problems;
}

/** Point at the collector's service, our stand-in for the reference's key-started daemon. */
function collectorNote(env: Env): string {
  const unit = join(home(env), '.config', 'systemd', 'user', 'tma-collector.service');
  return existsSync(unit)
    ? 'tma: the collector runs as a systemd user unit: `systemctl --user enable --now tma-collector`\n'
    : `tma: to publish this machine to a hub, run the collector as a service: see ${packageFile('deploy/tma-collector.service')}\n`;
}

export async function installKeys(env: Env, o: KeysOpts): Promise<boolean> {
  const w = where(env, o);
  const cur = readOr(w.managed, '');
  if (cur.text.trim() !== '' && !cur.text.includes(KEYS_MARKER)) {
    throw new InstallError(`${w.managed} is not tma's key file (no "${KEYS_MARKER}" banner); move it away and re-run`);
  }
  const conf = readOr(w.conf.path, '');
  const keys = await chooseKeys(env, o, conf.text, w.conf.path);
  if ((await applyFile(w.managed, 'tma key bindings', cur.text, renderManaged(tmaBin(env), o.mouse, keys), o)) === 'declined') return false;
  if (w.conf.created) process.stdout.write(`tma: creating ${w.conf.path}\n`);
  if ((await applyFile(w.conf.path, 'tmux.conf source line', conf.text, planConfAdd(conf.text, w.line), o)) === 'declined') return false;
  const said = keys.attention ? `; then prefix+${keys.attention} jumps to the agent waiting longest` : '';
  process.stdout.write(`tma: reload with \`tmux source-file ${w.conf.path}\`${said}\n`);
  if (o.mouse) process.stdout.write('tma: the mouse bindings need `set -g mouse on`\n');
  if (!o.noDaemon) process.stdout.write(collectorNote(env));
  process.stdout.write("tma: for a status-bar count add `set -g status-right '#(tma status)'` to your tmux.conf\n");
  return true;
}

/**
 * tma's keys minus the ones the person holds (in their tmux.conf, or on the running server): each
 * such key is named; a free key is offered instead (asked on a terminal, taken with --yes) or the
 * binding is left out. Their own binding always stays.
 */
async function chooseKeys(env: Env, o: KeysOpts, confText: string, confPath: string): Promise<KeyMap> {
  const bin = tmaBin(env);
  const listed = o.listKeys ? await o.listKeys().catch(() => null) : null;
  const taken = [...confBindings(confText, confPath), ...(listed === null ? [] : serverBindings(listed, bin))];
  const plan = planKeys(DEFAULT_KEYS, taken);
  const keys = plan.keys;
  for (const c of plan.conflicts) {
    const mine = `${DEFAULT_KEYS[c.binding]}`;
    process.stdout.write(
      `tma: prefix+${mine} is already yours (${c.taken.where}: ${c.taken.command || '(no command)'}); keeping it, not binding ${BINDING_WORDS[c.binding]} there\n`,
    );
    if (c.offer === null) {
      process.stdout.write(`tma: no free key to offer for ${BINDING_WORDS[c.binding]}; left unbound\n`);
      continue;
    }
    const take = o.yes || (process.stdin.isTTY && (await ask(`Bind ${BINDING_WORDS[c.binding]} to prefix+${c.offer} instead? [y/N] `)));
    if (take) {
      keys[c.binding] = c.offer;
      process.stdout.write(`tma: ${BINDING_WORDS[c.binding]} goes on prefix+${c.offer}\n`);
    } else process.stdout.write(`tma: ${BINDING_WORDS[c.binding]} left unbound\n`);
  }
  return keys;
}

async function uninstallKeys(env: Env, o: KeysOpts): Promise<boolean> {
  const w = where(env, o);
  if (existsSync(w.managed)) {
    const cur = readOr(w.managed, '');
    if (cur.text.includes(KEYS_MARKER)) {
      if ((await applyFile(w.managed, 'tma key bindings', cur.text, null, o)) === 'declined') return false;
    } else process.stdout.write(`tma: ${w.managed} is not tma's key file; leaving it untouched\n`);
  }
  const conf = readOr(w.conf.path, '');
  const next = planConfRemove(conf.text);
  if (next === conf.text) process.stdout.write(`tma: no tma source line in ${w.conf.path}\n`);
  else if ((await applyFile(w.conf.path, 'tmux.conf source line', conf.text, next, o)) === 'declined') return false;
  process.stdout.write('tma: key bindings removed\n');
  return true;
}

export async function main(p: Parsed<typeof INSTALL_KEYS>): Promise<number> {
  if (p.positionals.length) throw new UsageError(`install-keys takes no arguments, got ${p.positionals.join(' ')}`);
  const env = process.env;
  const o: KeysOpts = {
    mouse: p.opts.mouse === true,
    yes: p.opts.yes === true,
    noDaemon: p.opts['no-daemon'] === true,
    conf: p.opts.conf,
    configDir: p.opts['config-dir'],
    listKeys: async () => {
      const runner = await openRunner(targetOf(p, env), { mode: 'spawn', bin: tmuxBin(env) });
      try {
        return await runner.run(['list-keys', '-T', 'prefix'], { timeoutMs: 2000 });
      } catch {
        // No server running (or none reachable): the tmux.conf's own lines are all there is to read.
        return null;
      } finally {
        runner.close();
      }
    },
  };
  return guard(async () => {
    try {
      if (p.opts.check === true) {
        const problems = keysProblems(env, o);
        if (problems.length === 0) {
          process.stdout.write('tma: keybindings OK\n');
          return 0;
        }
        process.stderr.write(`tma: keybindings incomplete:\n${problems.map((l) => `  - ${l}\n`).join('')}`);
        return 1;
      }
      return (await (p.opts.uninstall === true ? uninstallKeys(env, o) : installKeys(env, o))) ? 0 : 1;
    } catch (e) {
      if (e instanceof InstallError) throw new ExitError(e.message, 1);
      throw e;
    } finally {
      closePrompts();
    }
  });
}
