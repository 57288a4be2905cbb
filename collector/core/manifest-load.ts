// Turning manifest text into compiled agent manifests, and merging the bundled set with the
// user's. Pure: the caller reads the files and hands over their text.

import { parse as parseToml } from 'smol-toml';
import type { z } from 'zod';
import { compileRustRegex } from './rust-regex.js';
import { agentManifestSchema, describeIssue, type RawMatch } from './manifest-schema.js';
import { ENGINE_VERSION, compareVersions, parseVersion } from './version.js';
import type { AgentManifest, Claim, HookMapEntry, ManifestFile, ManifestSet, Matcher, Rule } from './types.js';

/** A manifest that cannot be used; the message names the file and, when known, the key. */
export class ManifestError extends Error {
  readonly file: string;
  readonly key: string | null;
  /** The message without the file, as doctor and the skip notice print it. */
  readonly problem: string;

  constructor(file: string, key: string | null, problem: string) {
    const where = key ? `${key}: ${problem}` : problem;
    super(`${file}: ${where}`);
    this.name = 'ManifestError';
    this.file = file;
    this.key = key;
    this.problem = where;
  }
}

/** The order identity tries the bundled agents in; it decides who claims a shared `node`. */
export const BUNDLED_AGENT_ORDER = ['claude', 'opencode', 'codex', 'gemini', 'cursor', 'pi'] as const;

function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

/** `/a/b/claude.toml` -> `claude` (either separator, so Windows-style paths read too). */
export function fileStem(path: string): string {
  const base = baseName(path);
  return base.endsWith('.toml') ? base.slice(0, -'.toml'.length) : base;
}

/** Parse TOML, naming the file and position on failure. */
export function parseTomlFile(file: ManifestFile): Record<string, unknown> {
  try {
    return parseToml(file.text);
  } catch (e) {
    const err = e as { message?: string; line?: number; column?: number };
    const first = (err.message ?? String(e)).split('\n')[0] ?? '';
    const at = typeof err.line === 'number' ? ` (line ${err.line}, column ${err.column ?? 0})` : '';
    throw new ManifestError(file.path, null, `invalid TOML: ${first}${at}`);
  }
}

/**
 * The version gate, read before anything else is validated: a manifest written for a newer
 * engine may use keys this one has never heard of, and "upgrade" is the useful thing to say.
 * A missing or non-string value is left for the strict parse to report.
 */
export function checkEngineVersion(path: string, doc: Record<string, unknown>): void {
  const wanted = doc['min_engine_version'];
  if (typeof wanted !== 'string') return;
  try {
    parseVersion(wanted);
  } catch (e) {
    throw new ManifestError(path, 'min_engine_version', (e as Error).message);
  }
  if (compareVersions(wanted, ENGINE_VERSION) > 0) {
    throw new ManifestError(path, 'min_engine_version', `requires engine ${wanted}, this is ${ENGINE_VERSION}: upgrade tma`);
  }
}

/** Strict schema parse, with the first problem reported as file + key. */
export function strictParse<T extends z.ZodType>(path: string, schema: T, doc: unknown): z.output<T> {
  const result = schema.safeParse(doc);
  if (!result.success) {
    const { key, problem } = describeIssue(result.error);
    throw new ManifestError(path, key || null, problem);
  }
  return result.data;
}

function compileAt(path: string, key: string, source: string): RegExp {
  try {
    return compileRustRegex(source);
  } catch (e) {
    throw new ManifestError(path, key, (e as Error).message);
  }
}

function compileMatch(path: string, key: string, m: RawMatch): Matcher {
  if (m.contains !== undefined) return { kind: 'contains', text: m.contains };
  if (m.regex !== undefined) return { kind: 'regex', source: m.regex, re: compileAt(path, `${key}.regex`, m.regex) };
  if (m.line_regex !== undefined) {
    return { kind: 'line_regex', source: m.line_regex, re: compileAt(path, `${key}.line_regex`, m.line_regex) };
  }
  if (m.any !== undefined) return { kind: 'any', of: m.any.map((x, i) => compileMatch(path, `${key}.any[${i}]`, x)) };
  if (m.all !== undefined) return { kind: 'all', of: m.all.map((x, i) => compileMatch(path, `${key}.all[${i}]`, x)) };
  if (m.not !== undefined) return { kind: 'not', of: compileMatch(path, `${key}.not`, m.not) };
  // The schema guarantees exactly one kind; reaching here means the two drifted apart.
  throw new ManifestError(path, key, 'empty match');
}

/** Parse and compile one agent manifest. Throws ManifestError. */
export function parseAgentManifest(file: ManifestFile, opts: { bundled: boolean }): AgentManifest {
  const doc = parseTomlFile(file);
  checkEngineVersion(file.path, doc);
  const raw = strictParse(file.path, agentManifestSchema, doc);

  const titlePatterns = raw.identity.title_patterns.map((p, i) => compileAt(file.path, `identity.title_patterns[${i}]`, p));

  const rules: Rule[] = raw.rules.map((r, i) => ({
    index: i,
    state: r.state,
    detail: r.detail ?? null,
    priority: r.priority,
    region: r.region,
    match: compileMatch(file.path, `rules[${i}].match`, r.match),
    skipStateUpdate: r.skip_state_update,
  }));

  // Matchers stay source text: the reference compiles them per event, so a bad one only
  // ever fails to match instead of taking the whole agent's hook integration down.
  const hooks = raw.hooks
    ? {
        covers: [...raw.hooks.covers],
        map: raw.hooks.map.map((h): HookMapEntry => {
          const claim: Claim =
            h.claim.lifecycle !== undefined
              ? { kind: 'lifecycle', phase: h.claim.lifecycle }
              : { kind: 'state', state: h.claim.state ?? 'unknown', detail: h.claim.detail ?? null };
          return { event: h.event, matcher: h.matcher ?? null, claim, turnEnd: h.turn_end };
        }),
      }
    : null;

  const details: Record<string, string[]> = {};
  for (const [canonical, d] of Object.entries(raw.details)) details[canonical] = [...d.aliases];

  return {
    name: fileStem(file.path),
    path: file.path,
    bundled: opts.bundled,
    minEngineVersion: raw.min_engine_version,
    identity: { processNames: [...raw.identity.process_names], titlePatterns },
    hooks,
    capture: { visible: [...raw.capture.visible] },
    rules,
    details,
    telemetry: { context: raw.telemetry?.context ? { ...raw.telemetry.context } : null },
    prompt: raw.prompt ? { region: raw.prompt.region, summary: compileAt(file.path, 'prompt.summary', raw.prompt.summary) } : null,
  };
}

// Code-unit order of the whole file name, so the result never depends on the locale.
function byFileName(a: ManifestFile, b: ManifestFile): number {
  const x = baseName(a.path);
  const y = baseName(b.path);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Bundled manifests in the fixed identity order (a bad one is a build defect: throws), then the
 * user's files sorted by name: one named like a bundled agent replaces it in its slot, a new
 * name is appended. A bad user file is skipped and reported in `issues`.
 */
export function loadManifestSet(bundled: ManifestFile[], user: ManifestFile[]): ManifestSet {
  const rank = (name: string): number => {
    const i = (BUNDLED_AGENT_ORDER as readonly string[]).indexOf(name);
    return i < 0 ? BUNDLED_AGENT_ORDER.length : i;
  };
  const manifests = bundled
    .map((f) => parseAgentManifest(f, { bundled: true }))
    .sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const issues: ManifestSet['issues'] = [];
  for (const file of [...user].sort(byFileName)) {
    let m: AgentManifest;
    try {
      m = parseAgentManifest(file, { bundled: false });
    } catch (e) {
      if (!(e instanceof ManifestError)) throw e;
      issues.push({ file: file.path, problem: e.problem });
      continue;
    }
    const slot = manifests.findIndex((x) => x.name === m.name);
    if (slot >= 0) manifests[slot] = m;
    else manifests.push(m);
  }
  return { manifests, issues };
}
