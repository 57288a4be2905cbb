// Action manifests: one named thing `tma act` can do to an agent pane, one TOML file each.
// Pure: the caller reads the files. The cross-field rules live in the schema so each refusal
// names the key it is about.

import { z } from 'zod';
import { DETAIL_TOKEN, type State } from '../../shared/tokens.js';
import { detailTokenSchema, stateSchema } from './manifest-schema.js';
import { ManifestError, checkEngineVersion, fileStem, parseTomlFile, strictParse } from './manifest-load.js';
import type { ManifestFile, ManifestIssue } from './types.js';

export const REQUIREMENTS = ['session', 'cwd', 'pid', 'title'] as const;
export type Requirement = (typeof REQUIREMENTS)[number];

export const API_REPLIES = ['once', 'always', 'reject'] as const;
export type ApiReply = (typeof API_REPLIES)[number];

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_DETACH_TIMEOUT_MS = 900_000;

/** The gate. Empty `state`/`detail` lists put no constraint on that field. */
export interface ActionWhen {
  state: State[];
  detail: string[];
  contextPctMin: number | null;
  contextPctMax: number | null;
}

export interface ApiTransport {
  op: 'permission-reply';
  reply: ApiReply;
}

interface ActionCommon {
  name: string;
  path: string;
  bundled: boolean;
  minEngineVersion: string;
  label: string;
  /** null = no gate: fireable on any applicable agent, subject to `requires`. */
  when: ActionWhen | null;
  requires: Requirement[];
  confirm: boolean;
  timeoutMs: number;
  detachTimeoutMs: number;
}

export interface KeysAction extends ActionCommon {
  kind: 'keys';
  /** agent -> send-keys arguments, sent in one invocation. */
  keys: Record<string, string[]>;
  /** agent -> HTTP reply, used instead of keys for that agent. */
  api: Record<string, ApiTransport>;
  /**
   * agent -> the option its keys pick (Enter takes whichever option is highlighted): the keys go
   * only while the dialog highlights this one (act/highlight.ts).
   */
  cursor: Record<string, string>;
  /**
   * agent -> detail -> send-keys arguments: a dialog whose keys differ from the agent's usual ones
   * (Claude Code 2.1.332's auto-mode dialogs take Enter/Escape, not digits). Picked by the pane's
   * detail (keysFor in act/gate.ts); any other detail takes `keys`.
   */
  dialogKeys: Record<string, Record<string, string[]>>;
}

export interface ExecAction extends ActionCommon {
  kind: 'exec';
  command: string;
  /** Empty = every agent. */
  agents: string[];
  detach: boolean;
}

export type ActionManifest = KeysAction | ExecAction;

export type ActionSet = { ok: true; actions: ActionManifest[] } | { ok: false; issues: ManifestIssue[] };

export const BUNDLED_ACTION_ORDER = ['approve', 'deny', 'interrupt', 'compact'] as const;

const percent = z.int().min(0).max(100);

const whenSchema = z
  .strictObject({
    state: z.array(stateSchema).default([]),
    detail: z.array(detailTokenSchema).default([]),
    context_pct_min: percent.optional(),
    context_pct_max: percent.optional(),
  })
  .superRefine((w, ctx) => {
    if (w.context_pct_min !== undefined && w.context_pct_max !== undefined && w.context_pct_min > w.context_pct_max) {
      ctx.addIssue({
        code: 'custom',
        path: ['context_pct_min'],
        message: `context_pct_min (${w.context_pct_min}) is greater than context_pct_max (${w.context_pct_max})`,
      });
    }
  });

// Agent names are manifest file stems and travel into tmux formats and env: the safe charset only.
const agentToken = z.string().regex(DETAIL_TOKEN, { error: 'bad agent token: must be lowercase letters, digits, "_" or "-"' });

const apiSchema = z.strictObject({
  op: z.literal('permission-reply'),
  reply: z.enum(API_REPLIES),
});

export const actionManifestSchema = z
  .strictObject({
    min_engine_version: z.string(),
    name: z.string().regex(DETAIL_TOKEN, { error: 'must be a token of lowercase letters, digits, "_" or "-"' }),
    label: z.string(),
    kind: z.enum(['keys', 'exec']),
    when: whenSchema.optional(),
    agents: z.array(agentToken).optional(),
    requires: z
      .array(z.string())
      .default([])
      .superRefine((list, ctx) => {
        for (const [i, r] of list.entries()) {
          if (!(REQUIREMENTS as readonly string[]).includes(r)) {
            ctx.addIssue({ code: 'custom', path: [i], message: `unknown requires token "${r}" (${REQUIREMENTS.join(', ')})` });
          }
        }
      })
      .transform((list) => list as Requirement[]),
    confirm: z.boolean().default(false),
    detach: z.boolean().optional(),
    timeout_ms: z.int().min(1).default(DEFAULT_TIMEOUT_MS),
    detach_timeout_ms: z.int().min(1).default(DEFAULT_DETACH_TIMEOUT_MS),
    command: z.string().min(1).optional(),
    // An empty key list would "succeed" while sending nothing.
    keys: z.record(agentToken, z.array(z.string().min(1)).min(1)).optional(),
    api: z.record(agentToken, apiSchema).optional(),
    cursor: z.record(agentToken, z.string().trim().min(1)).optional(),
    dialog_keys: z.record(agentToken, z.record(detailTokenSchema, z.array(z.string().min(1)).min(1))).optional(),
  })
  .superRefine((a, ctx) => {
    const fail = (key: string, message: string): void => {
      ctx.addIssue({ code: 'custom', path: key.split('.'), message });
    };
    if (a.kind === 'keys') {
      // The reference errors here rather than ignoring it: a keys action applies exactly to
      // the agents it has transports for, and a second list could only disagree.
      if (a.agents !== undefined) fail('agents', 'not allowed on a keys action (its agents are those in [keys] and [api])');
      if (a.command !== undefined) fail('command', 'not allowed on a keys action');
      if (a.detach !== undefined) fail('detach', 'not allowed on a keys action');
      const keys = Object.keys(a.keys ?? {});
      const api = Object.keys(a.api ?? {});
      // An agent may be in both: the API answers when an endpoint is known for the pane, the
      // keys otherwise (gate.ts laneFor). The reference refused that pairing; it
      // left an OpenCode without its plugin unanswerable.
      if (keys.length + api.length === 0) fail('keys', 'a keys action needs at least one agent in [keys] or [api]');
      for (const agent of Object.keys(a.cursor ?? {})) {
        if (!keys.includes(agent)) fail(`cursor.${agent}`, `no [keys] for ${agent}: a cursor check guards keys`);
      }
      // Dialog keys go only on a pane the gate lets through: a detail the gate refuses could never use them.
      const allowed = a.when?.detail ?? [];
      for (const [agent, byDetail] of Object.entries(a.dialog_keys ?? {})) {
        if (!keys.includes(agent)) fail(`dialog_keys.${agent}`, `no [keys] for ${agent}: dialog keys refine an agent's keys`);
        for (const detail of Object.keys(byDetail)) {
          if (allowed.length > 0 && !allowed.includes(detail))
            fail(`dialog_keys.${agent}.${detail}`, `"${detail}" is not in when.detail: these keys could never go`);
        }
      }
    } else {
      if (a.command === undefined) fail('command', 'an exec action needs a command');
      if (a.keys !== undefined) fail('keys', 'not allowed on an exec action');
      if (a.api !== undefined) fail('api', 'not allowed on an exec action');
      if (a.cursor !== undefined) fail('cursor', 'not allowed on an exec action');
      if (a.dialog_keys !== undefined) fail('dialog_keys', 'not allowed on an exec action');
    }
  });

/** Parse one action file. Throws ManifestError naming the file and key. */
export function parseActionManifest(file: ManifestFile, opts: { bundled?: boolean } = {}): ActionManifest {
  const doc = parseTomlFile(file);
  checkEngineVersion(file.path, doc);
  const raw = strictParse(file.path, actionManifestSchema, doc);
  const stem = fileStem(file.path);
  if (raw.name !== stem) {
    throw new ManifestError(file.path, 'name', `"${raw.name}" must equal the file name stem "${stem}"`);
  }
  const common: ActionCommon = {
    name: raw.name,
    path: file.path,
    bundled: opts.bundled ?? false,
    minEngineVersion: raw.min_engine_version,
    label: raw.label,
    when: raw.when
      ? {
          state: [...raw.when.state],
          detail: [...raw.when.detail],
          contextPctMin: raw.when.context_pct_min ?? null,
          contextPctMax: raw.when.context_pct_max ?? null,
        }
      : null,
    requires: [...new Set(raw.requires)],
    confirm: raw.confirm,
    timeoutMs: raw.timeout_ms,
    detachTimeoutMs: raw.detach_timeout_ms,
  };
  if (raw.kind === 'keys') {
    const dialogKeys = Object.fromEntries(Object.entries(raw.dialog_keys ?? {}).map(([agent, byDetail]) => [agent, { ...byDetail }]));
    return { ...common, kind: 'keys', keys: { ...(raw.keys ?? {}) }, api: { ...(raw.api ?? {}) }, cursor: { ...(raw.cursor ?? {}) }, dialogKeys };
  }
  return { ...common, kind: 'exec', command: raw.command ?? '', agents: [...(raw.agents ?? [])], detach: raw.detach ?? false };
}

/** The agents an action applies to, as `act --list` shows them (empty on exec = all). */
export function actionAgents(action: ActionManifest): string[] {
  const names = action.kind === 'keys' ? [...Object.keys(action.keys), ...Object.keys(action.api)] : action.agents;
  return [...new Set(names)].sort();
}

function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

/**
 * Bundled actions in their fixed order (a bad one throws), then user files by file name: a
 * same-named file replaces the bundled one in its slot, new ones are appended. Unlike agent
 * manifests, one broken user file fails the whole set: firing a half-loaded set could run a
 * bundled action the user meant to override.
 */
export function loadActionSet(bundled: ManifestFile[], user: ManifestFile[]): ActionSet {
  const rank = (name: string): number => {
    const i = (BUNDLED_ACTION_ORDER as readonly string[]).indexOf(name);
    return i < 0 ? BUNDLED_ACTION_ORDER.length : i;
  };
  const actions = bundled
    .map((f) => parseActionManifest(f, { bundled: true }))
    .sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const issues: ManifestIssue[] = [];
  const sorted = [...user].sort((a, b) => {
    const x = baseName(a.path);
    const y = baseName(b.path);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (const file of sorted) {
    let action: ActionManifest;
    try {
      action = parseActionManifest(file);
    } catch (e) {
      if (!(e instanceof ManifestError)) throw e;
      issues.push({ file: file.path, problem: e.problem });
      continue;
    }
    const slot = actions.findIndex((x) => x.name === action.name);
    if (slot >= 0) actions[slot] = action;
    else actions.push(action);
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, actions };
}
