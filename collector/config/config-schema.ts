// config.toml: strict — a key we do not know is an error naming the file and the key, because a
// silently ignored typo in a detection knob is worse than a refusal. Sections the reference tool
// documents but we do not act on yet are accepted with their known keys so a shared config loads.

import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { DEFAULT_FOLD } from '../core/types.js';
import { ConfigError, type Config, type NotifySettings } from './config-types.js';

export { ConfigError, DEFAULT_CONFIG, type Config } from './config-types.js';

const secs = z.number().int().nonnegative();
const strList = z.array(z.string());

const notifyTrigger = z.strictObject({ command: z.string().optional() });

// A colour goes inside `#[fg=…]`: a name, colourN or #rrggbb, nothing that could end the style.
const statusStyle = z.strictObject({
  glyph: z
    .string()
    .min(1)
    .regex(/^[^\u0000-\u001f\u007f]+$/, { error: 'a glyph may not hold control characters' })
    .optional(),
  color: z
    .string()
    .regex(/^[A-Za-z0-9#]+$/, { error: 'a color is a tmux colour name, colourN or #rrggbb' })
    .optional(),
});
const statusSchema = z.strictObject({
  blocked: statusStyle.optional(),
  working: statusStyle.optional(),
  done: statusStyle.optional(),
  idle: statusStyle.optional(),
  unknown: statusStyle.optional(),
});

const configSchema = z.strictObject({
  fold: z
    .strictObject({
      freshness_secs: secs.optional(),
      dwell_secs: secs.optional(),
      hook_decay_secs: secs.optional(),
      blocked_decay_secs: secs.optional(),
    })
    .optional(),
  agent: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        enabled: z.boolean().optional(),
        process_names: strList.optional(),
      }),
    )
    .optional(),
  tmux: z.strictObject({ bin: z.string().min(1).optional() }).optional(),
  daemon: z
    .strictObject({
      autostart: z.boolean().optional(),
      sweep_secs: secs.optional(),
      quiet_ms: secs.optional(),
      zero_member_recheck_secs: secs.optional(),
      demote_edges: secs.optional(),
    })
    .optional(),
  notify: z
    .strictObject({
      from_event: z.boolean().optional(),
      /** Seconds a pane stays blocked on one episode before this host rings for it; absent rings at once. */
      dwell_secs: z.number().min(0).max(3600).optional(),
      command: z.string().optional(),
      on: z
        .array(z.string().refine((v) => v === 'blocked' || v === 'done', { error: (i) => `unknown notify trigger ${JSON.stringify(i.input)} (blocked, done)` }))
        .optional(),
      bell: z.boolean().optional(),
      osc: z.boolean().optional(),
      log: z.string().optional(),
      include_title: z.boolean().optional(),
      blocked: notifyTrigger.optional(),
      done: notifyTrigger.optional(),
      context_high: z.strictObject({ threshold: z.number().min(0).max(100), command: z.string().optional() }).optional(),
    })
    .optional(),
  api: z.record(z.string(), z.strictObject({ api_base: z.string() })).optional(),
  telemetry: z.strictObject({ windows: z.record(z.string(), z.number()).optional() }).optional(),
  status: statusSchema.optional(),
  picker: z.record(z.string(), z.unknown()).optional(),
  focus: z.strictObject({ events: z.boolean().optional() }).optional(),
  install: z.strictObject({ wrapper_ref: z.string().optional() }).optional(),
  /** How this machine reaches other hosts of the fleet (`tma --hub … jump --host NAME`). */
  hosts: z
    .record(
      z.string().regex(/^[A-Za-z0-9._-]+$/, 'host names use letters, digits, dot, dash, underscore'),
      z.strictObject({
        ssh: z
          .string()
          .min(1)
          .regex(/^[^\s-][^\s]*$/, 'an ssh destination such as user@host'),
        ssh_options: strList.optional(),
      }),
    )
    .optional(),
  /** What this host lets a hub fire on its panes (fleet act forwarding). */
  remote: z
    .strictObject({
      allow_actions: strList.optional(),
      allow_exec: z.boolean().optional(),
      share_prompt: z.boolean().optional(),
      /** A hub may mute this host's panes (it only silences notifications): default yes. */
      allow_mute: z.boolean().optional(),
    })
    .optional(),
});

export type RawConfig = z.infer<typeof configSchema>;

function issuePath(path: readonly PropertyKey[]): string {
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
}

function notifySettings(n: RawConfig['notify']): NotifySettings {
  return {
    command: n?.command ?? null,
    bell: n?.bell ?? false,
    osc: n?.osc ?? false,
    log: n?.log ?? null,
    includeTitle: n?.include_title ?? false,
    triggerCommands: {
      blocked: n?.blocked?.command ?? null,
      done: n?.done?.command ?? null,
      context_high: n?.context_high?.command ?? null,
    },
    contextHigh: n?.context_high ? { threshold: n.context_high.threshold } : null,
    ...(n?.dwell_secs ? { dwellMs: Math.round(n.dwell_secs * 1000) } : {}),
  };
}

/**
 * Where the keys of the old `[agents]` table live now: an agent's `api_base` is an API-lane
 * setting (`[api.<agent>]`); `enabled` and `process_names` moved to one `[[agent]]` per agent,
 * which takes no `api_base` (pointing there only led to a second refusal).
 */
function legacyAgentsProblem(agents: unknown): string {
  const moves: string[] = [];
  let other = false;
  const tables: [string, unknown][] = Object.entries(agents !== null && typeof agents === 'object' ? agents : {});
  for (const [name, table] of tables) {
    const keys = table !== null && typeof table === 'object' ? Object.keys(table) : [];
    if (keys.includes('api_base')) moves.push(`move agents.${name}.api_base to [api.${name}] api_base`);
    if (keys.length === 0 || keys.some((k) => k !== 'api_base')) other = true;
  }
  const renamed = 'the [agents] table was renamed to [[agent]] (one table per agent: name, enabled, process_names)';
  return moves.length === 0 ? renamed : [...moves, ...(other ? [renamed] : [])].join('; ');
}

export function parseConfig(path: string, text: string): Config {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (e) {
    throw new ConfigError(`${path}: not valid TOML: ${(e as Error).message.split('\n')[0]}`);
  }
  // The reference's earliest configs listed agents under one [agents] table.
  if (raw !== null && typeof raw === 'object' && 'agents' in raw) {
    throw new ConfigError(`${path}: agents: ${legacyAgentsProblem(raw.agents)}`);
  }
  const r = configSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    const where = issuePath(i.path);
    if (i.code === 'unrecognized_keys') {
      const key = [where, i.keys[0]].filter(Boolean).join('.');
      throw new ConfigError(`${path}: ${key}: unknown key`);
    }
    throw new ConfigError(`${path}: ${where || '(top level)'}: ${i.message}`);
  }
  const c = r.data;
  const f = c.fold ?? {};
  const ms = (v: number | undefined, d: number) => (v === undefined ? d : v * 1000);
  return {
    fold: {
      freshnessMs: ms(f.freshness_secs, DEFAULT_FOLD.freshnessMs),
      dwellMs: ms(f.dwell_secs, DEFAULT_FOLD.dwellMs),
      hookDecayMs: ms(f.hook_decay_secs, DEFAULT_FOLD.hookDecayMs),
      blockedDecayMs: ms(f.blocked_decay_secs, DEFAULT_FOLD.blockedDecayMs),
    },
    agents: c.agent ?? [],
    tmuxBin: c.tmux?.bin ?? null,
    notify: { fromEvent: c.notify?.from_event ?? false, on: c.notify?.on ?? ['blocked'], ...notifySettings(c.notify) },
    apiBase: Object.fromEntries(Object.entries(c.api ?? {}).map(([k, v]) => [k, v.api_base])),
    remote: {
      allowActions: c.remote?.allow_actions ?? null,
      allowExec: c.remote?.allow_exec ?? false,
      sharePrompt: c.remote?.share_prompt ?? null,
      // Only when set: the config cache keeps what survives JSON, and undefined does not.
      ...(c.remote?.allow_mute !== undefined ? { allowMute: c.remote.allow_mute } : {}),
    },
    status: c.status ?? {},
    ...(c.hosts ? { hosts: Object.fromEntries(Object.entries(c.hosts).map(([k, v]) => [k, { ssh: v.ssh, sshOptions: v.ssh_options ?? [] }])) } : {}),
  };
}
