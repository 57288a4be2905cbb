// The settled configuration every verb works with, and its defaults. Apart from the schema
// (config-schema.ts) so that a command with no config file never loads a validator.

import type { StatusStyles } from '../../shared/status-format.js';
import { DEFAULT_FOLD, type FoldConfig } from '../core/types.js';

export interface Config {
  fold: FoldConfig;
  agents: { name: string; enabled?: boolean; process_names?: string[] }[];
  tmuxBin: string | null;
  notify: { fromEvent: boolean; on: ('blocked' | 'done')[] };
  apiBase: Record<string, string>;
  /** `sharePrompt`: `[remote] share_prompt`; null = unset (a hub's own collector then shares). */
  remote: { allowActions: string[] | null; allowExec: boolean; sharePrompt?: boolean | null };
  /** `[status]`: per-class glyph and colour overrides for `tma status`. */
  status: StatusStyles;
}

export const DEFAULT_CONFIG: Config = {
  fold: DEFAULT_FOLD,
  agents: [],
  tmuxBin: null,
  notify: { fromEvent: false, on: ['blocked'] },
  apiBase: {},
  remote: { allowActions: null, allowExec: false },
  status: {},
};

export class ConfigError extends Error {}

