// The real agent CLIs the suite runs, pinned: a version bump is one line here. Each is installed
// by tools/agents-install.mjs into its own npm prefix outside the clone, keyed by version:
// $TMA_AGENTS_CACHE (default ~/.cache/tma-agents)/<name>-<version>/node_modules/.bin/<bin>.

import { homedir } from 'node:os';
import { join } from 'node:path';

export const AGENTS = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.197', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.171.0', bin: 'codex' },
  opencode: { pkg: 'opencode-ai', version: '1.18.33', bin: 'opencode' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
  pi: { pkg: '@mariozechner/pi-coding-agent', version: '0.73.1', bin: 'pi' },
};

export function agentsCache() {
  return process.env.TMA_AGENTS_CACHE || join(homedir(), '.cache', 'tma-agents');
}

/** The npm prefix one agent is installed in. */
export function agentPrefix(name) {
  const a = AGENTS[name];
  return join(agentsCache(), `${name}-${a.version}`);
}

/** The agent's executable inside its prefix. */
export function agentBin(name) {
  return join(agentPrefix(name), 'node_modules', '.bin', AGENTS[name].bin);
}
