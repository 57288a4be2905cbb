// What install-hooks, init and doctor share: the wrapper, the reference written into configs,
// and one agent's install, uninstall and check from start to finish.

import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import type { AgentManifest } from '../../collector/core/types.js';
import { TmuxError } from '../../collector/tmux/errors.js';
import { openRunner, type TmuxRunner } from '../../collector/tmux/runner.js';
import { tmuxBin as tmuxBinary, type ServerTarget } from '../../collector/tmux/target.js';
import { InstallError, type ApplyOpts } from './apply.js';
import { parse } from 'smol-toml';
import { ADAPTERS, classifyAgent, installAgent, uninstallAgent, type Shim, type Wiring } from './agents.js';
import { agentPaths, configDir, packageFile, tmaBin, type AgentPaths, type Env, type PathFlags } from './paths.js';
import { clearPaneOptions, installTmuxHooks, tmuxHookStates, uninstallTmuxHooks, type TmuxHookReport } from './tmux-hooks.js';

export interface Ctx {
  env: Env;
  paths: AgentPaths;
  configDir: string;
  /** The tma executable tmux hooks run. */
  bin: string;
  wrapperPath: string;
  ref: string;
  refMode: 'absolute' | 'bare';
  manifests: AgentManifest[];
  target: ServerTarget;
  focus: boolean;
  /** --statusline / --no-statusline; null keeps what the agent has (or was recorded as wanting). */
  statusline: 'install' | 'remove' | null;
}

export function makeCtx(o: {
  env: Env;
  manifests: AgentManifest[];
  target: ServerTarget;
  pathFlags?: PathFlags;
  configDir?: string;
  wrapperPath?: string;
  wrapperRef?: 'absolute' | 'bare';
  statusline?: 'install' | 'remove' | null;
  focus?: boolean;
}): Ctx {
  const env = o.env;
  const bin = tmaBin(env);
  const wrapperPath = o.wrapperPath || env.TMA_WRAPPER_PATH || join(dirname(bin), 'tma-hook');
  const refMode = o.wrapperRef ?? 'absolute';
  return {
    env,
    paths: agentPaths(env, o.pathFlags),
    configDir: configDir(env, o.configDir),
    bin,
    wrapperPath,
    ref: refMode === 'bare' ? 'tma-hook' : wrapperPath,
    refMode,
    manifests: o.manifests,
    target: o.target,
    focus: o.focus ?? false,
    statusline: o.statusline ?? null,
  };
}

/** A wrapper placed anywhere else forwards to the one shipped next to bin/tma.js. */
export function wrapperBytes(path: string): string {
  const shipped = packageFile('bin/tma-hook');
  if (path === shipped) return readFileSync(shipped, 'utf8');
  return `#!/bin/sh\n# tma-hook, placed by \`tma install-hooks\`: hands every hook to the wrapper shipped with tma.\nexec '${shipped.replaceAll("'", "'\\''")}' "$@"\n`;
}

const executable = (p: string) => {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

export function writeWrapper(ctx: Ctx): void {
  const want = wrapperBytes(ctx.wrapperPath);
  try {
    if (existsSync(ctx.wrapperPath) && readFileSync(ctx.wrapperPath, 'utf8') === want && executable(ctx.wrapperPath)) return;
    mkdirSync(dirname(ctx.wrapperPath), { recursive: true });
    writeFileSync(ctx.wrapperPath, want);
    chmodSync(ctx.wrapperPath, 0o755);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const hint = code === 'EACCES' || code === 'EROFS' ? ' (choose a writable place with --wrapper-path, e.g. ~/.local/bin/tma-hook)' : '';
    throw new InstallError(`cannot write wrapper ${ctx.wrapperPath}: ${(e as Error).message}${hint}`);
  }
}

export function onPath(name: string, env: Env): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return null;
}

/** Does the reference written into configs reach a wrapper? */
export function wrapperResolves(ctx: Ctx): boolean {
  return ctx.refMode === 'bare' ? onPath('tma-hook', ctx.env) !== null : existsSync(ctx.ref) && statSync(ctx.ref).isFile();
}

export function wrapperReason(ctx: Ctx): string | null {
  if (wrapperResolves(ctx)) return null;
  return ctx.refMode === 'bare'
    ? `wrapper \`tma-hook\` not on $PATH (add ${dirname(ctx.wrapperPath)} to $PATH)`
    : `wrapper ${ctx.ref} missing (config entries reference it; run \`tma install-hooks AGENT\` to write it)`;
}

async function withRunner<T>(ctx: Ctx, fn: (r: TmuxRunner) => Promise<T>): Promise<T> {
  const runner = await openRunner(ctx.target, { mode: 'spawn', bin: tmuxBinary(ctx.env) });
  try {
    return await fn(runner);
  } finally {
    runner.close();
  }
}

const serverGone = (e: unknown) => e instanceof TmuxError && e.kind === 'server-gone';

export function manifestOf(ctx: Ctx, agent: string): AgentManifest {
  const m = ctx.manifests.find((x) => x.name === agent);
  if (!m) throw new InstallError(`no manifest for agent "${agent}"`);
  if (!m.hooks) throw new InstallError(`agent "${agent}" is hookless (its manifest has no [hooks] block); there is nothing to wire`);
  if (!(ADAPTERS as readonly string[]).includes(agent)) {
    throw new InstallError(`tma cannot edit ${agent}'s config itself; have its hooks run \`tma-hook ${agent} <event>\` by hand`);
  }
  return m;
}

/** Install one agent: wrapper, agent config, then the tmux hooks. False when a change was declined. */
export async function wireAgent(ctx: Ctx, agent: string, o: ApplyOpts): Promise<boolean> {
  const m = manifestOf(ctx, agent);
  writeWrapper(ctx);
  if (ctx.refMode === 'bare') {
    const found = onPath('tma-hook', ctx.env);
    if (!found) {
      throw new InstallError(`wrapper_ref is "bare" but no tma-hook is on $PATH.\n  Add ${dirname(ctx.wrapperPath)} to $PATH, or use --wrapper-ref absolute.`);
    }
    if (found !== ctx.wrapperPath) process.stderr.write(`tma: warning: $PATH finds ${found}, not ${ctx.wrapperPath}\n`);
  }
  if (/^\/(nix|gnu)\/store\//.test(ctx.ref)) {
    process.stderr.write(`tma: warning: ${ctx.ref} is in a package store and disappears on garbage collection; use --wrapper-path\n`);
  }
  if (!(await installAgent(agent, m, ctx.paths, ctx.ref, o, shimFor(ctx, agent)))) return false;
  if (ctx.statusline !== null) recordShimChoice(ctx, agent, ctx.statusline === 'install');
  try {
    await withRunner(ctx, (r) => installTmuxHooks(r, ctx.configDir, ctx.bin, ctx.focus));
  } catch (e) {
    if (serverGone(e)) process.stdout.write('tma: no tmux server running; its attention hooks are added the next time you run this inside tmux\n');
    else throw new InstallError(`cannot install tmux hooks: ${(e as Error).message}`);
  }
  process.stdout.write(`tma: installed hooks for ${agent}\n`);
  return true;
}

export async function unwireAgent(ctx: Ctx, agent: string, o: ApplyOpts): Promise<boolean> {
  const m = manifestOf(ctx, agent);
  const ok = await uninstallAgent(agent, m, ctx.paths, o);
  if (!ok) return false;
  try {
    await withRunner(ctx, (r) => uninstallTmuxHooks(r, ctx.configDir));
  } catch (e) {
    if (!serverGone(e)) throw new InstallError(`cannot remove tmux hooks: ${(e as Error).message}`);
  }
  process.stdout.write(`tma: uninstalled hooks for ${agent}\n`);
  const others = classifyAll(ctx).filter((w) => w.status === 'wired' || w.status === 'incomplete');
  if (others.length === 0) {
    try {
      const n = await withRunner(ctx, clearPaneOptions);
      if (n > 0) process.stdout.write(`tma: cleared tma's options from ${n} pane(s)\n`);
    } catch (e) {
      if (!serverGone(e)) process.stderr.write(`tma: cannot clear pane options: ${(e as Error).message}\n`);
    }
    process.stdout.write("tma: if you added `set -g status-right '#(tma status)'` to your tmux config, remove it by hand\n");
  }
  return true;
}

const SHIM_RECORD = 'statusline-state.toml';

function shimOptIns(ctx: Ctx): string[] {
  try {
    const doc = parse(readFileSync(join(ctx.configDir, SHIM_RECORD), 'utf8')) as { agents?: unknown };
    return Array.isArray(doc.agents) ? doc.agents.filter((a): a is string => typeof a === 'string') : [];
  } catch {
    return [];
  }
}

/** A recorded --statusline turns "keep" into "install", so a plain re-install keeps the shim. */
function shimFor(ctx: Ctx, agent: string): Shim {
  const intent = ctx.statusline ?? (shimOptIns(ctx).includes(agent) ? 'install' : 'keep');
  return { intent, bin: ctx.bin };
}

function recordShimChoice(ctx: Ctx, agent: string, want: boolean): void {
  const agents = new Set(shimOptIns(ctx));
  if (want) agents.add(agent);
  else agents.delete(agent);
  const text =
    '# Written by `tma install-hooks --statusline`: agents whose status line also feeds tma.\n' +
    '# A plain `tma install-hooks AGENT` keeps the shim for agents listed here.\n# Safe to delete.\n' +
    `agents = [${[...agents]
      .sort()
      .map((a) => JSON.stringify(a))
      .join(', ')}]\n`;
  try {
    mkdirSync(ctx.configDir, { recursive: true });
    writeFileSync(join(ctx.configDir, SHIM_RECORD), text);
  } catch (e) {
    process.stderr.write(`tma: warning: cannot record the status-line choice: ${(e as Error).message}\n`);
  }
}

export function classifyAll(ctx: Ctx): Wiring[] {
  return ctx.manifests.map((m) => classifyAgent(m.name, m, ctx.paths, ctx.ref, shimFor(ctx, m.name)));
}

/** The tmux hooks' states, or a reason they could not be read; null when no server runs. */
export async function tmuxReport(ctx: Ctx): Promise<{ hooks: TmuxHookReport[]; error: string | null } | null> {
  try {
    return { hooks: await withRunner(ctx, (r) => tmuxHookStates(r, ctx.configDir, ctx.bin, ctx.focus)), error: null };
  } catch (e) {
    if (serverGone(e)) return null;
    return { hooks: [], error: `cannot verify tmux hooks: ${(e as Error).message}` };
  }
}
