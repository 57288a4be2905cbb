// Each verb's flags, with their types: the verb table (cli/verb-table.ts) parses, documents and
// completes from them, and each verb types its options by them (`Parsed<typeof LS>`). They sit
// apart from the table because the table loads the verbs: a verb that imported it back would
// make an import circle. A flag name means one type in every verb that has it.

import { bool, list, text, type Flags } from './args.js';
import { SELECTOR, STATES, STATUS } from './status-flags.js';

export { SELECTOR, STATUS };

export const NONE = {} as const satisfies Flags;

export const LS = { json: bool, tsv: bool, pane: text, ...SELECTOR } as const satisfies Flags;

export const DOCTOR = { json: bool, 'exit-code': bool } as const satisfies Flags;

export const EVENT = { agent: text, kind: text, pane: text, payload: text, answer: bool } as const satisfies Flags;

export const ACT = {
  json: bool,
  pane: text,
  ...SELECTOR,
  all: bool,
  'dry-run': bool,
  arg: list,
  force: bool,
  yes: bool,
  list: bool,
  slot: text,
  'expect-episode-ms': { type: 'number', integer: true, invalid: (raw: string) => `--expect-episode-ms needs an epoch in ms, got "${raw}"` },
  'expect-permission-request': text,
  server: text,
  'expect-prompt': text,
  again: bool,
  menu: bool,
} as const satisfies Flags;

export const MUTE = { pane: text, ...SELECTOR, for: text, clear: bool, server: text } as const satisfies Flags;

export const SUPERVISE = {
  pane: text,
  name: text,
  nonce: text,
  'timeout-ms': { type: 'number', integer: true, invalid: () => 'supervise: missing arguments' },
} as const satisfies Flags;

// --interval is seconds as typed: collector and subscribe each word their own rule for it.
export const COLLECTOR = { stdio: bool, 'host-name': text, interval: text } as const satisfies Flags;

/** `tma hub`'s flags and those of its subcommands (token, tls, pair, clients, revoke), which the hub itself refuses. */
export const HUB = {
  listen: text,
  nats: text,
  'no-local': bool,
  host: text,
  client: text,
  role: text,
  dir: text,
  force: bool,
  print: bool,
  // `tma hub tls --show`: the kept certificate's fingerprint and the commands that trust it.
  show: bool,
  // `tma hub tls --name HOST[,HOST...]`, `tma hub pair --name NAME`.
  name: text,
  ttl: text,
  json: bool,
} as const satisfies Flags;

export const DEBUG = { trigger: text, json: bool } as const satisfies Flags;

// --count, --since and --timeout are read by shared/wait.ts, which words their errors.
export const WAIT = {
  until: { type: 'string', values: [...STATES, 'done'] },
  pane: text,
  any: bool,
  all: bool,
  count: text,
  since: text,
  timeout: text,
  json: bool,
  ...SELECTOR,
} as const satisfies Flags;

export const SUBSCRIBE = { json: bool, interval: text, 'changes-only': bool, events: bool, ...SELECTOR } as const satisfies Flags;

export const INSTALL_HOOKS = {
  all: bool,
  check: bool,
  uninstall: bool,
  yes: bool,
  statusline: bool,
  'no-statusline': bool,
  settings: text,
  'gemini-settings': text,
  'codex-config': text,
  'codex-hooks': text,
  'cursor-hooks': text,
  'cursor-cli-config': text,
  'opencode-plugin': text,
  'pi-extension': text,
  'config-dir': text,
  'wrapper-path': text,
  'wrapper-ref': { type: 'string', values: ['absolute', 'bare'] },
} as const satisfies Flags;

export const INSTALL_KEYS = {
  uninstall: bool,
  check: bool,
  mouse: bool,
  'no-daemon': bool,
  yes: bool,
  conf: text,
  'config-dir': text,
} as const satisfies Flags;

export const INIT = { yes: bool, 'no-daemon': bool, 'config-dir': text, conf: text } as const satisfies Flags;

export const JUMP = {
  attention: bool,
  blocked: bool,
  next: bool,
  back: bool,
  home: bool,
  pane: text,
  menu: bool,
  'menu-timeout': text,
  client: { type: 'string', short: 'c' },
  ...SELECTOR,
  server: text,
} as const satisfies Flags;

/** `tma watch` and the picker (bare `tma`); `-c/--client` is the tmux client a jump moves. */
export const WATCH = { table: bool, client: { type: 'string', short: 'c' }, ...SELECTOR } as const satisfies Flags;
