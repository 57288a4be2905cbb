// Where install-hooks, install-keys and doctor look: a flag, else an environment variable, else
// the agent's default location. An empty variable counts as unset.

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installStateDir, installStateDirPinned } from '../../shared/config-dir.js';

export type Env = NodeJS.ProcessEnv;

const set = (v: string | undefined) => (v !== undefined && v !== '' ? v : undefined);
export const home = (env: Env) => set(env.HOME) ?? '.';

/** The install state's folder (shared/config-dir.ts says where, and what TMA_CONFIG_DIR moves). */
export const configDir = installStateDir;
export const configDirPinned = installStateDirPinned;

/** The package's own files: dist/cli/install/paths.js sits three levels below the root. */
export const packageFile = (rel: string) => fileURLToPath(new URL(`../../../${rel}`, import.meta.url));

/** The tma executable named in tmux hooks: $TMA_BIN, else this package's bin/tma.js. */
export const tmaBin = (env: Env) => set(env.TMA_BIN) ?? packageFile('bin/tma.js');

export interface AgentPaths {
  claudeSettings: string;
  geminiSettings: string;
  codexConfig: string;
  codexHooks: string;
  cursorHooks: string;
  cursorCliConfig: string;
  opencodePlugin: string;
  piExtension: string;
}

export type PathFlags = Partial<Record<keyof AgentPaths, string | undefined>>;

export function agentPaths(env: Env, flags: PathFlags = {}): AgentPaths {
  const h = home(env);
  const codexHome = set(env.CODEX_HOME) ?? join(h, '.codex');
  const xdg = set(env.XDG_CONFIG_HOME) ?? join(h, '.config');
  const pick = (k: keyof AgentPaths, envName: string, dflt: string) => set(flags[k]) ?? set(env[envName]) ?? dflt;
  return {
    claudeSettings: pick('claudeSettings', 'TMA_CLAUDE_SETTINGS', join(h, '.claude', 'settings.json')),
    geminiSettings: pick('geminiSettings', 'TMA_GEMINI_SETTINGS', join(h, '.gemini', 'settings.json')),
    codexConfig: pick('codexConfig', 'TMA_CODEX_CONFIG', join(codexHome, 'config.toml')),
    codexHooks: pick('codexHooks', 'TMA_CODEX_HOOKS', join(codexHome, 'hooks.json')),
    cursorHooks: pick('cursorHooks', 'TMA_CURSOR_HOOKS', join(h, '.cursor', 'hooks.json')),
    cursorCliConfig: pick('cursorCliConfig', 'TMA_CURSOR_CLI_CONFIG', join(h, '.cursor', 'cli-config.json')),
    opencodePlugin: pick('opencodePlugin', 'TMA_OPENCODE_PLUGIN', join(xdg, 'opencode', 'plugin', 'tma.js')),
    piExtension: pick('piExtension', 'TMA_PI_EXTENSION', join(set(env.PI_CODING_AGENT_DIR) ?? join(h, '.pi', 'agent'), 'extensions', 'tma.js')),
  };
}

/** The agent-config flags of install-hooks, mapped onto AgentPaths. */
export const PATH_FLAGS: Record<string, keyof AgentPaths> = {
  settings: 'claudeSettings',
  'gemini-settings': 'geminiSettings',
  'codex-config': 'codexConfig',
  'codex-hooks': 'codexHooks',
  'cursor-hooks': 'cursorHooks',
  'cursor-cli-config': 'cursorCliConfig',
  'opencode-plugin': 'opencodePlugin',
  'pi-extension': 'piExtension',
};
