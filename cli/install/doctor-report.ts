// What doctor adds about setup: each agent's hook wiring (the classification --check uses), the
// wrapper, the tmux attention hooks on this server, and whether mouse bindings are installed.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentManifest } from '../../collector/core/types.js';
import type { ServerTarget } from '../../collector/tmux/target.js';
import { installSettings, type InstallSettings } from './settings.js';
import { classifyAll, makeCtx, tmuxReport, wrapperResolves } from './wiring.js';

export async function setupReport(manifests: AgentManifest[], target: ServerTarget, env: NodeJS.ProcessEnv, configFlag?: string) {
  let settings: InstallSettings = { wrapperRef: undefined, focus: false };
  try {
    settings = installSettings(configFlag, env);
  } catch {
    // doctor names config problems elsewhere; the defaults stand in here
  }
  const ctx = makeCtx({ env, manifests, target, wrapperRef: settings.wrapperRef, focus: settings.focus });
  const wirings = classifyAll(ctx);
  const tmux = await tmuxReport(ctx);
  const anyWired = wirings.some((w) => w.status === 'wired' || w.status === 'incomplete');
  const managed = join(ctx.configDir, 'tmux.conf');
  const tmuxHooks = (tmux?.hooks ?? []).map((h) => ({ hook: h.hook, present: h.state === 'present', hook_state: h.state }));
  // Attention hooks are installed with the agents' hooks: before any agent is wired, their
  // absence is the expected state, not a fault.
  const hookWarnings = anyWired ? tmuxHooks.filter((h) => !h.present).length + (tmux?.error ? 1 : 0) : 0;
  return {
    wrapper: { path: ctx.wrapperPath, reference: ctx.ref, present: wrapperResolves(ctx) },
    tmux_hooks: tmuxHooks,
    hook_wiring: wirings.map((w) => ({ agent: w.agent, hook_status: w.status, reasons: w.reasons })),
    mouseBindings: existsSync(managed) && readFileSync(managed, 'utf8').includes('bind-key -n Mouse'),
    warnings: hookWarnings + wirings.filter((w) => w.status === 'incomplete').length,
    lines: [
      `hooks: ${wirings.map((w) => `${w.agent} ${w.status}`).join(', ')}`,
      ...wirings.flatMap((w) => w.reasons.map((r) => `  ${r}`)),
      ...(anyWired || tmuxHooks.some((h) => h.present)
        ? [`tmux hooks: ${tmuxHooks.map((h) => `${h.hook} ${h.present ? '✓' : `✗ ${h.hook_state}`}`).join('  ')}`]
        : []),
      ...(tmux?.error ? [`  ${tmux.error}`] : []),
    ],
  };
}
