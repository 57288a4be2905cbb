// The selector flags and `status`'s own, apart from the other verbs' (cli/verb-flags.ts): the
// quick status (cli/status-fast.ts) parses with these, and its bundle then holds no other flags.

import { text, type Flags } from './args.js';

export const STATES = ['blocked', 'working', 'idle', 'unknown'] as const;

export const SELECTOR = {
  session: text,
  repo: text,
  branch: text,
  agent: text,
  state: { type: 'string', values: STATES },
  host: text,
} as const satisfies Flags;

export const STATUS = { format: { type: 'string', values: ['tmux', 'plain', 'json', 'prom'] }, ...SELECTOR } as const satisfies Flags;
