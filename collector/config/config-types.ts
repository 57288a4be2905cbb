// The settled configuration every verb works with, and its defaults. Apart from the schema
// (config-schema.ts) so that a command with no config file never loads a validator.

import type { StatusStyles } from '../../shared/status-format.js';
import { DEFAULT_FOLD, type FoldConfig } from '../core/types.js';

/** The `[notify]` sinks and routing (surfaces §4); `on` and `from_event` sit beside them. */
export interface NotifySettings {
  command: string | null;
  bell: boolean;
  osc: boolean;
  log: string | null;
  includeTitle: boolean;
  /** `[notify.blocked|done] command`: per-trigger routing over `command`. */
  triggerCommands: { blocked: string | null; done: string | null; context_high: string | null };
  /** `[notify.context_high]`; null: that trigger is off. */
  contextHigh: { threshold: number } | null;
  /** `[notify] dwell_secs`: a blocked episode rings once it has lasted this long; absent, at once. */
  dwellMs?: number;
}

export const DEFAULT_NOTIFY_SETTINGS: NotifySettings = {
  command: null,
  bell: false,
  osc: false,
  log: null,
  includeTitle: false,
  triggerCommands: { blocked: null, done: null, context_high: null },
  contextHigh: null,
};

export interface Config {
  fold: FoldConfig;
  agents: { name: string; enabled?: boolean; process_names?: string[] }[];
  tmuxBin: string | null;
  notify: { fromEvent: boolean; on: ('blocked' | 'done')[] } & NotifySettings;
  apiBase: Record<string, string>;
  /** `sharePrompt`: `[remote] share_prompt`; null = unset, which shares (only `false` keeps it on the host). */
  /** `allowMute`: `[remote] allow_mute`; unset (true) lets a hub mute panes here. */
  remote: { allowActions: string[] | null; allowExec: boolean; sharePrompt?: boolean | null; allowMute?: boolean };
  /** `[status]`: per-class glyph and colour overrides for `tma status`. */
  status: StatusStyles;
  /** `[hosts.NAME]`: how this machine reaches a fleet host over ssh (a destination, extra ssh options). */
  hosts?: Record<string, { ssh: string; sshOptions: string[] }>;
}

export const DEFAULT_CONFIG: Config = {
  fold: DEFAULT_FOLD,
  agents: [],
  tmuxBin: null,
  notify: { fromEvent: false, on: ['blocked'], ...DEFAULT_NOTIFY_SETTINGS },
  apiBase: {},
  remote: { allowActions: null, allowExec: false },
  status: {},
};

export class ConfigError extends Error {}
