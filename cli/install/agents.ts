// The six agents tma can wire, each as the files it owns and how to edit, undo and check them.
// Planning is pure (collector/install); this file reads, decides labels and order, and applies.

import { existsSync, readFileSync } from 'node:fs';
import type { AgentManifest } from '../../collector/core/types.js';
import { notifyState, planNotifyInstall, planNotifyUninstall } from '../../collector/install/codex-toml.js';
import { EditError, eventStates, planInstall, planUninstall, type HookShape } from '../../collector/install/json-hooks.js';
import { applyFile, InstallError, readOr, type ApplyOpts } from './apply.js';
import { packageFile, type AgentPaths } from './paths.js';

export const ADAPTERS = ['claude', 'gemini', 'cursor', 'opencode', 'codex', 'pi'] as const;

/** The manifest's hook events in order, once each, with the sub-agent pair appended. */
export function hookEvents(m: AgentManifest): string[] {
  if (!m.hooks) return [];
  const out: string[] = [];
  for (const e of [...m.hooks.map.map((x) => x.event), 'SubagentStart', 'SubagentStop']) if (!out.includes(e)) out.push(e);
  return out;
}

const BRIDGES = {
  opencode: { file: 'bridges/opencode-plugin.js', marker: 'tma OpenCode bridge', what: 'opencode plugin', pathKey: 'opencodePlugin' },
  pi: { file: 'bridges/pi-extension.js', marker: 'tma pi bridge', what: 'pi extension', pathKey: 'piExtension' },
} as const;

export function renderBridge(agent: 'opencode' | 'pi', ref: string): string {
  return readFileSync(packageFile(BRIDGES[agent].file), 'utf8').replaceAll('@@TMA_HOOK@@', ref);
}

interface JsonSite {
  path: string;
  label: string;
  shape: HookShape;
  events: string[];
}

function jsonSite(agent: string, events: string[], paths: AgentPaths): JsonSite | null {
  switch (agent) {
    case 'claude':
      return { path: paths.claudeSettings, label: 'agent hooks', shape: 'nested', events };
    case 'gemini':
      return { path: paths.geminiSettings, label: 'gemini hooks', shape: 'nested', events };
    case 'cursor':
      return { path: paths.cursorHooks, label: 'cursor hooks', shape: 'flat', events };
    case 'codex':
      return { path: paths.codexHooks, label: 'codex hooks', shape: 'nested', events: events.filter((e) => e !== 'notify') };
    default:
      return null;
  }
}

const editable = (path: string, fn: () => string): string => {
  try {
    return fn();
  } catch (e) {
    if (e instanceof EditError) throw new InstallError(`cannot edit ${path}: ${e.message}`);
    throw e;
  }
};

/** Wire one agent's config. Returns false when the user declined a change. */
export async function installAgent(agent: string, m: AgentManifest, paths: AgentPaths, ref: string, o: ApplyOpts): Promise<boolean> {
  const events = hookEvents(m);
  if (agent === 'opencode' || agent === 'pi') {
    const b = BRIDGES[agent];
    const path = paths[b.pathKey];
    const cur = readOr(path, '');
    if (cur.text.trim() !== '' && !cur.text.includes(b.marker)) {
      throw new InstallError(`${path} is not a tma ${b.what} (no marker); remove it and re-run to install`);
    }
    return (await applyFile(path, b.what, cur.text, renderBridge(agent, ref), o)) !== 'declined';
  }
  if (agent === 'codex') {
    const cur = readOr(paths.codexConfig, '');
    const next = editable(paths.codexConfig, () => planNotifyInstall(cur.text, ref));
    if ((await applyFile(paths.codexConfig, 'codex notify', cur.text, next, o)) === 'declined') return false;
  }
  const site = jsonSite(agent, events, paths)!;
  const cur = readOr(site.path, '{}\n');
  const next = editable(site.path, () => planInstall(cur.text, { agent, events: site.events, ref, shape: site.shape }));
  // An absent file that would only get `{}` is not worth creating; the planner never gives that.
  const ok = (await applyFile(site.path, site.label, cur.exists ? cur.text : '', next, o)) !== 'declined';
  if (agent === 'gemini') {
    process.stdout.write(
      'tma: gemini folder-trust gate: Gemini loads these hooks only in folders you have trusted at its first-run prompt\n',
    );
  }
  if (agent === 'codex') {
    process.stdout.write(
      'tma: codex trust gate: hooks.json entries stay inert until you open codex, run /hooks and trust the tma-hook ' +
        'entries (notify works without it; trust again if the wrapper path changes)\n',
    );
  }
  return ok;
}

/** Remove only our entries. A declined JSON/TOML change is not an error; a declined bridge removal is. */
export async function uninstallAgent(agent: string, m: AgentManifest, paths: AgentPaths, o: ApplyOpts): Promise<boolean> {
  const events = hookEvents(m);
  if (agent === 'opencode' || agent === 'pi') {
    const b = BRIDGES[agent];
    const path = paths[b.pathKey];
    if (!existsSync(path)) {
      process.stdout.write(`tma: ${b.what} already absent (${path})\n`);
      return true;
    }
    const cur = readOr(path, '');
    if (!cur.text.includes(b.marker)) {
      process.stdout.write(`tma: ${path} is not a tma ${b.what}; leaving it untouched\n`);
      return true;
    }
    return (await applyFile(path, b.what, cur.text, null, o)) !== 'declined';
  }
  const edit = async (path: string, label: string, plan: (t: string) => string) => {
    if (!existsSync(path)) {
      process.stdout.write(`tma: ${label} already absent (${path})\n`);
      return;
    }
    const cur = readOr(path, '');
    const next = editable(path, () => plan(cur.text));
    if (next === cur.text) process.stdout.write(`tma: ${label} already absent (${path})\n`);
    else await applyFile(path, label, cur.text, next, o);
  };
  if (agent === 'codex') await edit(paths.codexConfig, 'codex notify', planNotifyUninstall);
  const site = jsonSite(agent, events, paths)!;
  await edit(site.path, site.label, (t) => planUninstall(t, { agent, events: site.events, shape: site.shape }));
  return true;
}

export type HookStatus = 'wired' | 'incomplete' | 'not_installed' | 'hookless' | 'no_adapter';

export interface Wiring {
  agent: string;
  status: HookStatus;
  reasons: string[];
}

/** What the agent's config files say about our wiring (read-only; shared with doctor). */
export function classifyAgent(agent: string, m: AgentManifest | undefined, paths: AgentPaths, ref: string): Wiring {
  if (!m || !m.hooks) return { agent, status: 'hookless', reasons: [] };
  if (!(ADAPTERS as readonly string[]).includes(agent)) return { agent, status: 'no_adapter', reasons: [] };
  const events = hookEvents(m);
  const reasons: string[] = [];
  let present = 0;
  let current = 0;
  let channels = 0;
  const read = (path: string, fallback: string): string | null => {
    try {
      return readOr(path, fallback).text;
    } catch (e) {
      reasons.push(`agent ${agent}: ${(e as Error).message}`);
      return null;
    }
  };
  if (agent === 'opencode' || agent === 'pi') {
    const b = BRIDGES[agent];
    const path = paths[b.pathKey];
    const text = read(path, '');
    if (text === null) return { agent, status: 'incomplete', reasons };
    if (!text.includes(b.marker)) return { agent, status: 'not_installed', reasons: [] };
    if (text === renderBridge(agent, ref)) return { agent, status: 'wired', reasons: [] };
    const noun = agent === 'opencode' ? 'plugin' : 'extension';
    return { agent, status: 'incomplete', reasons: [`agent ${agent}: ${noun} ${path} is stale; re-run \`tma install-hooks ${agent}\``] };
  }
  if (agent === 'codex') {
    channels++;
    const text = read(paths.codexConfig, '');
    const st = text === null ? 'absent' : notifyState(text, ref);
    if (st === 'current') {
      present++;
      current++;
    } else if (st === 'stale') {
      present++;
      reasons.push(`agent codex: \`notify\` in ${paths.codexConfig} references a different wrapper; reinstall`);
    } else reasons.push(`agent codex: config ${paths.codexConfig} has no tma \`notify\` entry`);
  }
  const site = jsonSite(agent, events, paths)!;
  channels++;
  const text = read(site.path, '{}\n');
  if (site.events.length === 0) reasons.push(`agent ${agent}: declares no hook events, so no wiring could be verified`);
  else if (text !== null) {
    const states = eventStates(text, { agent, events: site.events, ref, shape: site.shape });
    const vals = [...states.values()];
    if (vals.some((s) => s !== 'absent')) present++;
    if (vals.every((s) => s === 'current')) current++;
    for (const [e, s] of states) {
      if (s === 'absent') reasons.push(`agent ${agent}: hook ${e} not wired`);
      if (s === 'stale') reasons.push(`agent ${agent}: hook ${e} names a different tma-hook (stale); re-run \`tma install-hooks ${agent}\``);
    }
  }
  if (present === 0 && reasons.every((r) => !r.includes('cannot read'))) return { agent, status: 'not_installed', reasons: [] };
  if (current === channels) return { agent, status: 'wired', reasons: [] };
  return { agent, status: 'incomplete', reasons };
}
