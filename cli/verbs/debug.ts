// `tma debug transitions [--json]` lives in debug-transitions.ts.
// `tma debug notify-test --trigger blocked|done|context_high`: fire a sample notification through
// the sinks config.toml sets up, so a person can check their command, log and terminal without
// waiting for an agent. The sample names no real pane unless run inside one ($TMUX_PANE).

import { HostSinks } from '../../collector/notify/host-sinks.js';
import { HOST_TRIGGERS, type HostTrigger } from '../../shared/notify.js';
import type { AgentRow } from '../../shared/row.js';
import { UsageError, type Parsed } from '../args.js';
import type { DEBUG } from '../verb-flags.js';
import { guard, loadLocalConfig, openLocal } from '../local.js';

export async function main(p: Parsed<typeof DEBUG>): Promise<number> {
  const what = p.positionals[0];
  if (what === 'transitions') return (await import('./debug-transitions.js')).main(p);
  if (what !== 'notify-test') throw new UsageError('tma debug notify-test --trigger blocked|done|context_high | tma debug transitions [--json]');
  const trigger = p.opts.trigger ?? 'blocked';
  if (!(HOST_TRIGGERS as readonly string[]).includes(trigger)) throw new UsageError('--trigger takes blocked, done or context_high');
  return guard(async () => {
    const env = process.env;
    const config = await loadLocalConfig(p, env);
    const now = Date.now();
    const pane = env.TMUX_PANE && /^%\d+$/.test(env.TMUX_PANE) ? env.TMUX_PANE : '%0';
    const row: AgentRow = {
      pane,
      agent: 'tma',
      state: trigger === 'blocked' ? 'blocked' : 'idle',
      detail: trigger === 'blocked' ? 'permission' : null,
      since: now,
      since_ms: now,
      episode_ms: now,
      locator: 'notify-test',
      title: 'tma notify-test',
      attention: true,
      done: trigger === 'done',
      session: null,
      transcript: null,
      permission_request: null,
      stamped_at_ms: now,
      context: trigger === 'context_high' ? (config.notify.contextHigh?.threshold ?? 90) : null,
      context_at_ms: null,
      muted: false,
      tokens: null,
      quota: null,
      cost_usd: null,
      repo: null,
      branch: null,
      worktree: null,
      pending_tool: null,
      pending_call: null,
      pending_summary: null,
      server: '',
      host: '',
    };
    const errors: string[] = [];
    const sinks = new HostSinks({ settings: config.notify, env, log: (l) => errors.push(l) });
    // The status-line message needs a tmux server; without one the other sinks still fire.
    let local: Awaited<ReturnType<typeof openLocal>> | null = null;
    try {
      local = await openLocal(p, { quietManifests: true });
    } catch {
      local = null;
    }
    const noTmux = { mode: 'spawn' as const, run: async () => '', runChain: async () => [], close: () => undefined };
    try {
      await sinks.fire({ trigger: trigger as HostTrigger, row, episodeMs: now, at: now }, local?.engine.runner ?? noTmux);
      // A command runs detached from the fire; wait for it so its failure is recorded before exit.
      while (sinks.inFlight > 0) await new Promise((r) => setTimeout(r, 50));
    } finally {
      local?.close();
    }
    for (const e of errors) process.stderr.write(`tma: ${e}\n`);
    process.stdout.write(`tma: notify-test fired ${trigger}\n`);
    return 0;
  });
}
