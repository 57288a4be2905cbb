// hub.toml `[[notify]]`: where the hub sends the fleet's notifications. Checked as strictly as the
// rest of hub.toml; a secret is read at load time so a missing file stops the hub, not a delivery.

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { HOST_TRIGGERS, type FleetTrigger } from '../../shared/notify.js';

const httpUrl = z.string().regex(/^https?:\/\/[^\s]+$/, 'an http:// or https:// URL');

export const notifyEntry = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9._-]+$/, 'sink names use letters, digits, dot, dash, underscore'),
  kind: z.enum(['ntfy', 'webhook', 'command']),
  url: httpUrl.optional(),
  command: z.string().min(1).optional(),
  secret_file: z.string().min(1).optional(),
  /** Host triggers this sink takes; `resolved` follows a blocked one it took (webhook, command). */
  on: z.array(z.enum(HOST_TRIGGERS)).min(1).optional(),
  hosts: z.array(z.string().min(1)).optional(),
  /** ntfy: the fleet page's address, for the notification's click; default the hub's own. */
  page_url: httpUrl.optional(),
  /** Carry what a prompt asks (`pending_summary`, when its host shares it); off unless said. */
  include_summary: z.boolean().optional(),
  /** Seconds a blocked pane must stay blocked on the same prompt before this sink hears of it. */
  dwell_secs: z.number().min(0).max(3600).optional(),
  /** Seconds between two notified episodes of the same pane; one sooner is skipped. */
  cooldown_secs: z.number().min(0).max(86_400).optional(),
  /** A notification marked "someone is looking at that pane": skipped (default) or sent. */
  when_looking: z.enum(['skip', 'send']).optional(),
  /** Answers a blocked notification offers as single-use links (only those its host allows remotely). */
  actions: z
    .array(z.string().regex(/^[a-z0-9_-]{1,64}$/, 'action names use a-z, 0-9, dash, underscore'))
    .max(3)
    .optional(),
  /** How long an action link stays good. */
  action_ttl_secs: z.number().int().min(30).max(86_400).optional(),
  /**
   * Who may fire an action link: `link` (default), whoever holds it (the ntfy topic's readers);
   * `device`, only a request that also carries a signed-in operator's token.
   */
  action_confirm: z.enum(['link', 'device']).optional(),
});
export type RawNotifyEntry = z.infer<typeof notifyEntry>;

export interface NotifySinkConfig {
  name: string;
  kind: 'ntfy' | 'webhook' | 'command';
  url: string | null;
  command: string | null;
  /** The HMAC key of a webhook's signature header. Never logged. */
  secret: string | null;
  on: FleetTrigger[];
  hosts: string[] | null;
  pageUrl: string | null;
  /** `include_summary = true`: the sink gets `pending_summary`; absent, the key is null. */
  includeSummary?: true;
  /** Absent: DEFAULT_DWELL_MS and so on (a sink built in code, a test). */
  dwellMs?: number;
  cooldownMs?: number;
  whenLooking?: 'skip' | 'send';
  actions?: string[];
  actionTtlMs?: number;
  /** `action_confirm = "device"`: a link fires only with an operator's bearer token beside it. */
  actionConfirm?: 'device';
}

export const DEFAULT_DWELL_MS = 5000;
export const DEFAULT_COOLDOWN_MS = 60_000;
export const DEFAULT_ACTION_TTL_MS = 15 * 60_000;

export const DEFAULT_SINK_ON: FleetTrigger[] = ['blocked'];

const expandHome = (p: string) => (p === '~' || p.startsWith('~/') ? join(process.env.HOME || homedir(), p.slice(1)) : p);

/** Settle the entries; throws an Error naming the entry on what the schema cannot say. */
export function settleNotifySinks(
  file: string,
  entries: RawNotifyEntry[],
  read: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): NotifySinkConfig[] {
  const seen = new Set<string>();
  return entries.map((e, i) => {
    const where = `${file}: notify[${i}]`;
    if (seen.has(e.name)) throw new Error(`${where}.name: "${e.name}" is already listed`);
    seen.add(e.name);
    if (e.kind === 'command') {
      if (!e.command) throw new Error(`${where}: a command sink needs command`);
      if (e.url) throw new Error(`${where}: a command sink takes command, not url`);
    } else {
      if (!e.url) throw new Error(`${where}: a ${e.kind} sink needs url`);
      if (e.command) throw new Error(`${where}: a ${e.kind} sink takes url, not command`);
    }
    if (e.secret_file && e.kind !== 'webhook') throw new Error(`${where}: secret_file is for webhook sinks`);
    if (e.page_url && e.kind !== 'ntfy') throw new Error(`${where}: page_url is for ntfy sinks`);
    if (e.actions && e.kind === 'command') throw new Error(`${where}: actions are for ntfy and webhook sinks`);
    if (e.action_confirm && !e.actions?.length) throw new Error(`${where}: action_confirm needs actions`);
    if (e.actions && new Set(e.actions).size !== e.actions.length) throw new Error(`${where}.actions: an action is listed twice`);
    let secret: string | null = null;
    if (e.secret_file) {
      const named = expandHome(e.secret_file);
      const path = isAbsolute(named) ? named : resolve(dirname(file), named);
      try {
        secret = read(path).trim();
      } catch (err) {
        throw new Error(`${where}.secret_file: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      if (!secret) throw new Error(`${where}.secret_file: the secret is empty`);
    }
    return {
      name: e.name,
      kind: e.kind,
      url: e.url ?? null,
      command: e.command ?? null,
      secret,
      on: e.on ?? DEFAULT_SINK_ON,
      hosts: e.hosts ?? null,
      pageUrl: e.page_url ?? null,
      ...(e.include_summary === true ? { includeSummary: true as const } : {}),
      dwellMs: Math.round((e.dwell_secs ?? DEFAULT_DWELL_MS / 1000) * 1000),
      cooldownMs: Math.round((e.cooldown_secs ?? DEFAULT_COOLDOWN_MS / 1000) * 1000),
      whenLooking: e.when_looking ?? 'skip',
      actions: e.actions ?? [],
      actionTtlMs: (e.action_ttl_secs ?? DEFAULT_ACTION_TTL_MS / 1000) * 1000,
      ...(e.action_confirm === 'device' ? { actionConfirm: 'device' as const } : {}),
    };
  });
}
