// Flags of the setup verbs (install-hooks, install-keys, init, jump, completions, help), kept
// apart from main.ts so that file only grows by one spread.

import { SELECTOR_OPTS, type OptSpec } from './args.js';

const b = { kind: 'bool' } as const;
const v = { kind: 'value' } as const;

export const SETUP_VERBS: Record<string, OptSpec> = {
  'install-hooks': {
    all: b, check: b, uninstall: b, yes: b, statusline: b, 'no-statusline': b,
    settings: v, 'gemini-settings': v, 'codex-config': v, 'codex-hooks': v, 'cursor-hooks': v, 'cursor-cli-config': v,
    'opencode-plugin': v, 'pi-extension': v, 'config-dir': v, 'wrapper-path': v, 'wrapper-ref': v,
  },
  'install-keys': { uninstall: b, check: b, mouse: b, 'no-daemon': b, yes: b, conf: v, 'config-dir': v },
  init: { yes: b, 'no-daemon': b, 'config-dir': v, conf: v },
  jump: {
    attention: b, blocked: b, next: b, back: b, home: b, pane: v, menu: b, client: { kind: 'value', short: 'c' },
    ...SELECTOR_OPTS,
  },
  completions: {},
  help: {},
};
