// The one place that says where tma's own files live: `$XDG_CONFIG_HOME/tma`, else
// `~/.config/tma`. config.toml, hub.toml, tokens, user manifests and the install state all sit
// there unless a flag or variable of their own names another place.
//
// TMA_CONFIG_DIR moves the install state only (hooks-state-*.toml, statusline-state.toml, the
// managed tmux.conf; spec install.md §0, ladder `--config-dir` → TMA_CONFIG_DIR → this folder):
// config.toml has TMA_CONFIG for that, and the hub's files have `--config` and `--dir`.

import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

type Env = Record<string, string | undefined>;

/** `$XDG_CONFIG_HOME`, else `$HOME/.config`. XDG says a relative (or empty) value is ignored. */
export function configHome(env: Env): string {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && isAbsolute(xdg)) return xdg;
  return join(env.HOME || homedir(), '.config');
}

/** tma's own configuration folder. */
export function tmaConfigDir(env: Env): string {
  return join(configHome(env), 'tma');
}

/** Where install-hooks, install-keys, init and doctor keep their state: `--config-dir`, TMA_CONFIG_DIR, else tmaConfigDir. */
export function installStateDir(env: Env, flag?: string): string {
  return flag || env.TMA_CONFIG_DIR || tmaConfigDir(env);
}

/** True when the install state's folder was pinned (flag or TMA_CONFIG_DIR) rather than derived. */
export function installStateDirPinned(env: Env, flag?: string): boolean {
  return Boolean(flag || env.TMA_CONFIG_DIR);
}
