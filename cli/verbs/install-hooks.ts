// `tma install-hooks AGENT | --all [--check] [--uninstall] [--yes]`: wire an agent's hooks to
// tma-hook, show every change as a diff first, and undo only what is ours.

import { UsageError, type Parsed } from '../args.js';
import type { INSTALL_HOOKS } from '../verb-flags.js';
import { closePrompts, InstallError } from '../install/apply.js';
import { PATH_FLAGS, type PathFlags } from '../install/paths.js';
import { installSettings } from '../install/settings.js';
import { classifyAll, makeCtx, manifestOf, tmuxReport, unwireAgent, wireAgent, wrapperReason, type Ctx } from '../install/wiring.js';
import { ExitError, guard, loadLocalConfig, loadManifestsFor, targetOf } from '../local.js';

export async function contextFor(p: Parsed<typeof INSTALL_HOOKS>): Promise<Ctx> {
  const env = process.env;
  const target = targetOf(p, env);
  const config = await loadLocalConfig(p, env);
  const set = await loadManifestsFor(p, config, env, () => undefined);
  const pathFlags: PathFlags = {};
  const opts: Readonly<Record<string, string | true | undefined>> = p.opts;
  for (const [f, k] of Object.entries(PATH_FLAGS)) {
    const v = opts[f];
    pathFlags[k] = typeof v === 'string' ? v : undefined;
  }
  const ref = p.opts['wrapper-ref'];
  if (ref !== undefined && ref !== 'absolute' && ref !== 'bare') throw new UsageError('--wrapper-ref is absolute or bare');
  let settings;
  try {
    settings = installSettings(p.globals.config, env);
  } catch (e) {
    throw new ExitError((e as Error).message, 1);
  }
  return makeCtx({
    env,
    manifests: set.manifests,
    target,
    pathFlags,
    configDir: p.opts['config-dir'],
    wrapperPath: p.opts['wrapper-path'],
    wrapperRef: ref ?? settings.wrapperRef,
    focus: settings.focus,
    statusline: p.opts.statusline === true ? 'install' : p.opts['no-statusline'] === true ? 'remove' : null,
  });
}

/** The --check report: reasons per agent, the wrapper, and the tmux hooks. */
export async function checkLines(ctx: Ctx, agent: string | null): Promise<string[]> {
  const lines: string[] = [];
  const wirings = classifyAll(ctx);
  for (const w of wirings) {
    if (agent !== null && w.agent !== agent) continue;
    if (agent !== null && w.status === 'not_installed') lines.push(`agent ${agent}: not installed`);
    if (w.status === 'incomplete' || agent !== null) lines.push(...w.reasons);
  }
  const wrapper = wrapperReason(ctx);
  if (wrapper) lines.push(wrapper);
  const tmux = await tmuxReport(ctx);
  if (tmux?.error) lines.push(tmux.error);
  for (const h of tmux?.hooks ?? []) if (h.reason) lines.push(h.reason);
  return lines;
}

export async function main(p: Parsed<typeof INSTALL_HOOKS>): Promise<number> {
  if (p.positionals.length > 1) throw new UsageError(`install-hooks takes one agent, got ${p.positionals.join(' ')}`);
  if (p.opts.statusline === true && p.opts['no-statusline'] === true) throw new UsageError('--statusline and --no-statusline cannot be used together');
  const agent = p.positionals[0] ?? null;
  return guard(async () => {
    const ctx = await contextFor(p);
    // Every file it changes is kept first beside itself (`<file>.tma-bak`), and the output says where.
    const o = { yes: p.opts.yes === true, backup: true };
    try {
      if (p.opts.check === true) {
        if (agent !== null) {
          const m = ctx.manifests.find((x) => x.name === agent);
          if (!m) throw new ExitError(`no manifest for agent "${agent}"`, 1);
        }
        const lines = await checkLines(ctx, agent);
        if (lines.length === 0) {
          process.stdout.write('tma: hooks OK\n');
          return 0;
        }
        process.stderr.write(`tma: hook wiring incomplete:\n${lines.map((l) => `  - ${l}\n`).join('')}`);
        process.stderr.write(`run \`tma install-hooks ${agent ?? 'AGENT'}\` to reinstall\n`);
        return 1;
      }
      const uninstall = p.opts.uninstall === true;
      if (p.opts.all === true) {
        if (agent !== null) throw new ExitError('--all covers every wired agent; drop the agent name, or drop --all', 1);
        const wired = classifyAll(ctx)
          .filter((w) => w.status === 'wired' || w.status === 'incomplete')
          .map((w) => w.agent);
        if (wired.length === 0) {
          process.stdout.write('tma: no agent carries tma wiring yet; run `tma install-hooks AGENT` first\n');
          return 0;
        }
        const failed: string[] = [];
        for (const a of wired) {
          process.stdout.write(`\ntma: ${uninstall ? 'uninstalling' : 'wiring'} ${a} ...\n`);
          try {
            if (!(await (uninstall ? unwireAgent(ctx, a, o) : wireAgent(ctx, a, o)))) failed.push(a);
          } catch (e) {
            if (!(e instanceof InstallError)) throw e;
            process.stderr.write(`tma: ${e.message}\n`);
            failed.push(a);
          }
        }
        if (failed.length) throw new ExitError(`${uninstall ? 'uninstall' : 'install'} did not complete: ${failed.join(', ')}`, 1);
        return 0;
      }
      if (agent === null) {
        throw new ExitError(
          `install-hooks needs an agent (${ctx.manifests
            .filter((m) => m.hooks)
            .map((m) => m.name)
            .join(', ')}), or --all for every wired one`,
          1,
        );
      }
      manifestOf(ctx, agent);
      const ok = uninstall ? await unwireAgent(ctx, agent, o) : await wireAgent(ctx, agent, o);
      return ok ? 0 : 1;
    } catch (e) {
      if (e instanceof InstallError) throw new ExitError(e.message, 1);
      throw e;
    } finally {
      closePrompts();
    }
  });
}
