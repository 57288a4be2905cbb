// The real agent CLIs the suite runs, pinned: a version bump is one line here. Each is installed
// by tools/agents-install.mjs into its own npm prefix outside the clone, keyed by version:
// $TMA_AGENTS_CACHE (default ~/.cache/tma-agents)/<name>-<version>/node_modules/.bin/<bin>.
// `version` is the one a case runs unless it names another; `versions` lists every version the
// suite runs (an agent whose releases paint differently is run at each: Claude Code 2.1.332 moved
// its footer and its dialogs, and people still run 2.1.197).

import { homedir } from 'node:os';
import { join } from 'node:path';

export const AGENTS = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.197', versions: ['2.1.197', '2.1.332'], bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.171.0', versions: ['0.171.0'], bin: 'codex' },
  opencode: { pkg: 'opencode-ai', version: '1.18.33', versions: ['1.18.33'], bin: 'opencode' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0', versions: ['0.61.0'], bin: 'gemini' },
  pi: { pkg: '@mariozechner/pi-coding-agent', version: '0.73.1', versions: ['0.73.1'], bin: 'pi' },
};

export function agentsCache() {
  return process.env.TMA_AGENTS_CACHE || join(homedir(), '.cache', 'tma-agents');
}

/** The npm prefix one agent's version is installed in (default: its `version`). */
export function agentPrefix(name, version = AGENTS[name].version) {
  return join(agentsCache(), `${name}-${version}`);
}

/** The agent's executable inside its prefix. */
export function agentBin(name, version = AGENTS[name].version) {
  return join(agentPrefix(name, version), 'node_modules', '.bin', AGENTS[name].bin);
}
