// How each real agent is set up for the suite: a temp HOME (and XDG dirs) holding the config
// that points it at the fake model server and pre-accepts its first-run dialogs, the command a
// person types to start it, and what its screen shows when it asks for permission.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGENTS, agentBin, agentsCache } from '../../tools/agents-versions.mjs';

export type AgentName = 'claude' | 'codex' | 'opencode' | 'gemini' | 'pi';

/**
 * `TMA_AGENTS_ONLY=opencode,gemini` runs only those agents' cases (a closer look at one agent);
 * unset, every agent runs. Cases of the agents left out are skipped, never counted as passed.
 */
export function selected(name: AgentName): boolean {
  const only = process.env.TMA_AGENTS_ONLY?.trim();
  return !only || only.split(',').some((n) => n.trim() === name);
}

/**
 * The versions of an agent the suite runs: those pinned in tools/agents-versions.mjs, or, with
 * `TMA_AGENTS_VERSIONS=claude@2.1.400,codex@0.180.0` (tools/agents-newest.mjs), the ones named there.
 */
export function versionsOf(name: AgentName): string[] {
  const named = (process.env.TMA_AGENTS_VERSIONS ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v.startsWith(`${name}@`))
    .map((v) => v.slice(name.length + 1));
  return named.length ? named : AGENTS[name].versions;
}

export interface AgentSetup {
  name: AgentName;
  /** Does this agent ask permission before running a shell command? (pi does not) */
  asks: boolean;
  /** The API key handed to it (the fake server takes any). */
  env: Record<string, string>;
  /** What a person types at the shell to start it (after `cd` into the project). */
  launch: string;
  /** Its permission prompt painted on screen (the suite's own reading, not tma's). */
  promptShown: RegExp;
  /** Its input box ready for a prompt. */
  readyShown: RegExp;
  /**
   * Start-up dialogs a person answers once (a config file cannot pre-accept them): what shows, and
   * the keys the suite types or the `tma act` that answers it (a dialog tma reads and answers).
   */
  dialogs?: ({ shown: RegExp; keys: string[] } | { shown: RegExp; act: 'approve' | 'deny' })[];
}

export interface AgentDirs {
  home: string;
  project: string;
  /** The fake model server's base URL. */
  url: string;
  /** The agent version that runs (default: its first pinned one). */
  version?: string | undefined;
  /** Claude Code after 2.1.197: keep the release's own auto mode instead of a person's manual one. */
  autoMode?: boolean | undefined;
}

const KEY = 'sk-tma-fake-0123456789abcdefghijklmnopqrstuvwxyz';

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

/** XDG and HOME for a pane: everything an agent reads or writes stays in the temp dir. */
export function homeEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_STATE_HOME: join(home, '.local/state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    CODEX_HOME: join(home, '.codex'),
    PI_CODING_AGENT_DIR: join(home, '.pi/agent'),
  };
}

export function setUpAgent(name: AgentName, d: AgentDirs): AgentSetup {
  switch (name) {
    case 'claude': {
      write(
        join(d.home, '.claude.json'),
        JSON.stringify({
          hasCompletedOnboarding: true,
          lastOnboardingVersion: d.version ?? AGENTS.claude.version,
          theme: 'dark',
          customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
          projects: { [d.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
        }),
      );
      // Releases after 2.1.197 start in auto mode, which runs the suite's command unasked. The
      // suite plays a person who kept manual mode: 2.1.332 then asks once, at first start, whether
      // auto mode becomes the default; `tma act deny` answers it (Escape: manual mode stays), as
      // a person would from tma (claude-dialogs.test.ts approves it and reads it first).
      const later = d.version !== undefined && d.version !== AGENTS.claude.version;
      if (later && !d.autoMode) write(join(d.home, '.claude/settings.json'), JSON.stringify({ permissions: { defaultMode: 'default' } }));
      return {
        name,
        asks: true,
        ...(later && !d.autoMode ? { dialogs: [{ shown: /Make auto mode your default permission mode\?/, act: 'deny' as const }] } : {}),
        env: {
          ANTHROPIC_BASE_URL: d.url,
          ANTHROPIC_API_KEY: KEY,
          DISABLE_AUTOUPDATER: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
        },
        launch: agentBin('claude', d.version),
        promptShown: /Do you want to proceed\?/,
        readyShown: /^\s*[>❯]\s/m,
      };
    }
    case 'codex': {
      write(
        join(d.home, '.codex/config.toml'),
        [
          'model = "fake-model"',
          'model_provider = "fake"',
          'approval_policy = "on-request"',
          'sandbox_mode = "workspace-write"',
          'check_for_update_on_startup = false',
          '',
          '[model_providers.fake]',
          'name = "fake"',
          `base_url = "${d.url}/v1"`,
          'wire_api = "responses"',
          'env_key = "OPENAI_API_KEY"',
          '',
          `[projects."${d.project}"]`,
          'trust_level = "trusted"',
          '',
        ].join('\n'),
      );
      return {
        name,
        asks: true,
        env: { OPENAI_API_KEY: KEY },
        launch: agentBin('codex'),
        promptShown: /Would you like to run the following command\?|Allow command|Yes, proceed/,
        readyShown: /fake-model \S+ · /,
        // After `tma install-hooks codex`, Codex asks once to trust the new hooks.
        dialogs: [{ shown: /Hooks need review/, keys: ['2', 'Enter'] }],
      };
    }
    case 'opencode': {
      write(
        join(d.project, 'opencode.json'),
        JSON.stringify({
          $schema: 'https://opencode.ai/config.json',
          autoupdate: false,
          share: 'disabled',
          model: 'fake/fake-model',
          provider: {
            fake: {
              npm: '@ai-sdk/openai-compatible',
              name: 'Fake',
              options: { baseURL: `${d.url}/v1`, apiKey: KEY },
              models: { 'fake-model': { name: 'Fake Model', tool_call: true, limit: { context: 100000, output: 4096 } } },
            },
          },
          permission: { bash: 'ask', edit: 'ask', external_directory: 'ask' },
        }),
      );
      return {
        name,
        asks: true,
        // With our plugin installed OpenCode fetches its plugin package from npm at start, into
        // each fresh HOME: bun's download cache is shared beside the CLIs so only the first start waits.
        env: {
          OPENCODE_DISABLE_MODELS_FETCH: '1',
          OPENCODE_DISABLE_AUTOUPDATE: '1',
          OPENCODE_DISABLE_SHARE: '1',
          BUN_INSTALL_CACHE_DIR: join(agentsCache(), 'opencode-bun-cache'),
        },
        launch: agentBin('opencode'),
        promptShown: /Permission required|Allow once/,
        readyShown: /Ask anything|ctrl\+p/i,
      };
    }
    case 'gemini': {
      write(
        join(d.home, '.gemini/settings.json'),
        JSON.stringify({
          security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
          general: { disableAutoUpdate: true, disableUpdateNag: true },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          ide: { enabled: false, hasSeenNudge: true },
          model: { name: 'gemini-2.5-pro' },
        }),
      );
      return {
        name,
        asks: true,
        env: { GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: d.url, GEMINI_CLI_NO_RELAUNCH: 'true' },
        launch: agentBin('gemini'),
        promptShown: /Allow once|Allow execution/,
        readyShown: /Type your message/,
      };
    }
    case 'pi': {
      write(
        join(d.home, '.pi/agent/models.json'),
        JSON.stringify({
          providers: {
            fake: {
              baseUrl: `${d.url}/v1`,
              api: 'openai-completions',
              apiKey: KEY,
              models: [
                {
                  id: 'fake-model',
                  name: 'Fake Model',
                  reasoning: false,
                  input: ['text'],
                  contextWindow: 100000,
                  maxTokens: 4096,
                  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
                },
              ],
            },
          },
        }),
      );
      write(join(d.home, '.pi/agent/settings.json'), JSON.stringify({ defaultProvider: 'fake', defaultModel: 'fake-model' }));
      return {
        name,
        asks: false,
        env: {},
        launch: `${agentBin('pi')} --provider fake --model fake-model`,
        promptShown: /$^/,
        readyShown: /fake-model/,
      };
    }
  }
}
