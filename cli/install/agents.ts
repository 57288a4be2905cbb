// The six agents tma can wire, each as the files it owns and how to edit, undo and check them.
// Planning is pure (collector/install); this file reads, decides labels and order, and applies.

import { existsSync, readFileSync } from 'node:fs';
import type { AgentManifest } from '../../collector/core/types.js';
import { notifyState, planNotifyInstall, planNotifyUninstall } from '../../collector/install/codex-toml.js';
import { EditError, eventStates, planInstall, planUninstall, type HookShape } from '../../collector/install/json-hooks.js';
import { applyFile, InstallError, readOr, type ApplyOpts } from './apply.js';
import { packageFile, type AgentPaths } from './paths.js';
import { planShimInstall, planShimRemove, shimState } from '../../collector/install/statusline.js';

/** What to do with the status-line shim: --statusline, --no-statusline, or neither. */
export type ShimIntent = 'install' | 'remove' | 'keep';
export interface Shim {
  intent: ShimIntent;
  /** The tma executable the shim runs. */
  bin: string;
}

function shimEdit(text: string, agent: string, s: Shim): string {
  return s.intent === 'install' ? planShimInstall(text, agent, s.bin) : s.intent === 'remove' ? planShimRemove(text, agent) : text;
}

const SHIM_LABEL: Record<ShimIntent, string> = {
  install: 'agent hooks + statusline context shim',
  remove: 'agent hooks (statusline context shim removed)',
  keep: 'agent hooks',
};

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
export async function installAgent(agent: string, m: AgentManifest, paths: AgentPaths, ref: string, o: ApplyOpts, shim: Shim): Promise<boolean> {
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
  let next = editable(site.path, () => planInstall(cur.text, { agent, events: site.events, ref, shape: site.shape }));
  // Claude's shim lives in the same settings.json: one diff for both.
  if (agent === 'claude') next = editable(site.path, () => shimEdit(next, agent, shim));
  const label = agent === 'claude' ? SHIM_LABEL[shim.intent] : site.label;
  let ok = (await applyFile(site.path, label, cur.exists ? cur.text : '', next, o)) !== 'declined';
  if (ok && agent === 'cursor' && shim.intent !== 'keep') {
    const cli = readOr(paths.cursorCliConfig, '{}\n');
    const after = editable(paths.cursorCliConfig, () => shimEdit(cli.text, agent, shim));
    if (after !== cli.text || cli.exists) {
      ok = (await applyFile(paths.cursorCliConfig, 'cursor statusline context shim', cli.exists ? cli.text : '', after, o)) !== 'declined';
    }
  }
  if (agent === 'gemini') {
    process.stdout.write('tma: gemini folder-trust gate: Gemini loads these hooks only in folders you have trusted at its first-run prompt\n');
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
  const unhook = (t: string) => planUninstall(t, { agent, events: site.events, shape: site.shape });
  if (agent === 'claude') await edit(site.path, 'agent hooks + statusline shim', (t) => planShimRemove(unhook(t), agent));
  else await edit(site.path, site.label, unhook);
  if (agent === 'cursor') await edit(paths.cursorCliConfig, 'cursor statusline shim', (t) => planShimRemove(t, agent));
  return true;
}

export type HookStatus = 'wired' | 'incomplete' | 'not_installed' | 'hookless' | 'no_adapter';

export interface Wiring {
  agent: string;
  status: HookStatus;
  reasons: string[];
}

/** What the agent's config files say about our wiring (read-only; shared with doctor). */
export function classifyAgent(agent: string, m: AgentManifest | undefined, paths: AgentPaths, ref: string, shim: Shim): Wiring {
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
  if (agent === 'claude' || agent === 'cursor') {
    const file = agent === 'claude' ? paths.claudeSettings : paths.cursorCliConfig;
    const text = read(file, '{}\n');
    const st = text === null ? 'not_installed' : shimState(text, agent, shim.bin);
    channels++;
    if (st === 'wired' || st === 'stale') present++;
    const problem =
      shim.intent === 'install'
        ? st === 'wired'
          ? null
          : st === 'stale'
            ? `statusline shim in ${file} references a different binary; reinstall`
            : st === 'foreign'
              ? `statusline in ${file} is not tma's context shim (clobbered); re-run with \`--statusline\``
              : `statusline shim not installed in ${file}`
        : st === 'wired' || st === 'stale'
          ? shim.intent === 'remove'
            ? `statusline shim still installed in ${file}; re-run \`tma install-hooks ${agent} --no-statusline\``
            : `statusline shim installed in ${file} but was not asked for; keep it with \`--statusline\` or remove it with \`--no-statusline\``
          : null;
    if (problem) reasons.push(`agent ${agent}: ${problem}`);
    else current++;
  }
  if (present === 0 && reasons.every((r) => !r.includes('cannot read'))) return { agent, status: 'not_installed', reasons: [] };
  if (current === channels) return { agent, status: 'wired', reasons: [] };
  return { agent, status: 'incomplete', reasons };
}
