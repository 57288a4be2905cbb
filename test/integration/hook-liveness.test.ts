// Hook-liveness demotion on a real tmux server: a watched engine skips the captures a live hook
// claim makes needless, counts quiet edges while the hooks stay silent, and after five of them
// captures every edge again, so a prompt the hooks never announced is still seen and stamped over
// the stale claim. The engine's clock is a test clock; tmux, the stand-in and the writes are real.

import { afterEach, expect, it } from 'vitest';
import { loadManifestSet } from '../../collector/core/manifest-load.js';
import { chain, renderPlan } from '../../collector/core/stamp-render.js';
import { DEFAULT_FOLD } from '../../collector/core/types.js';
import { Engine } from '../../collector/engine/cycle.js';
import { intakeEvent } from '../../collector/engine/event-intake.js';
import { bundledManifestDir, readManifestFiles } from '../../collector/manifest-files.js';
import { readProcesses } from '../../collector/tmux/proc-table.js';
import { openRunner, type TmuxRunner } from '../../collector/tmux/runner.js';
import { ScratchTmux } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux | null = null;
afterEach(() => {
  t?.kill();
  t = null;
});

it('edges under a live hook claim are not captured; after 5 silent edges they are, and the screen is stamped over the stale claim', async () => {
  t = new ScratchTmux('hlv');
  const s = t;
  const pane = s.start();
  const agent = await s.standIn(pane, 'claude', SCREENS.claudeIdle);
  const real = await openRunner({ kind: 'name', name: s.name }, { mode: 'spawn', bin: 'tmux' });
  let captures = 0;
  const runner: TmuxRunner = {
    mode: real.mode,
    run: (argv, o) => real.run(argv, o),
    runChain: (cmds, o) => {
      captures += cmds.filter((c) => c[0] === 'capture-pane').length;
      return real.runChain(cmds, o);
    },
    close: () => real.close(),
  };
  const manifests = loadManifestSet(readManifestFiles(bundledManifestDir()), []).manifests;
  const t0 = Math.floor(Date.now() / 1000) * 1000;
  let clock = t0;
  const engine = new Engine({ runner, manifests, fold: DEFAULT_FOLD, host: 'h', readProcs: readProcesses, now: () => clock });
  engine.watchOutput(() => true);
  /** A hook event as the collector takes it over its wake socket: stamped, and the pane's hooks known alive. */
  const hook = async (kind: string) => {
    await intakeEvent({ runner: real, manifests, agent: 'claude', kind, pane, payload: '{}', now: clock });
    engine.hookEvent(pane);
  };
  /** `n` quiet edges, 500 ms apart (as the output watch reports them), each followed by its cycle. */
  const edges = async (n: number) => {
    const before = captures;
    for (let i = 0; i < n; i++) {
      clock += 500;
      engine.markPainted([pane]);
      await engine.cycle();
    }
    return captures - before;
  };
  try {
    await hook('Stop');
    clock += 3500;
    await engine.cycle(); // the first look at the pane since its hook stamp
    expect(s.option(pane, '@agent_source')).toBe('hook');

    // A live hook's idle claim: twelve edges (a person typing into the prompt box) cost no capture.
    expect(await edges(12)).toBe(0);
    expect(engine.liveness.counts.skipped).toBe(12);

    // Past the hook decay with no hook event: a sweep look at the still screen (it agrees with the
    // claim, so the engine renews the claim itself) does not make the hooks look alive.
    clock = t0 + 65_000;
    await engine.cycle();
    expect(await edges(4)).toBe(0);
    expect(engine.liveness.demoted(pane)).toBe(false);
    expect(await edges(1)).toBe(1);
    expect(engine.liveness.demoted(pane)).toBe(true);

    // The agent works with its hooks silent: the screen is stamped over the stale claim, which the
    // engine's own renewal had kept from decaying in the store.
    await agent.paint(SCREENS.claudeWorking);
    expect(await edges(1)).toBe(1);
    expect(s.option(pane, '@agent_state')).toBe('working');
    expect(s.option(pane, '@agent_source')).toBe('capture');

    // A permission prompt the hooks never announced: seen on the next edge.
    await agent.paint(SCREENS.claudeBlocked);
    expect(await edges(1)).toBe(1);
    expect(s.option(pane, '@agent_state')).toBe('blocked');
    expect(s.option(pane, '@agent_source')).toBe('capture');

    // A hook event lifts the demotion: its idle claim's edges are free again.
    await agent.paint(SCREENS.claudeIdle);
    clock += 1000;
    await hook('Stop');
    expect(engine.liveness.demoted(pane)).toBe(false);
    clock += 3500;
    await engine.cycle();
    expect(s.option(pane, '@agent_source')).toBe('hook');
    expect(await edges(6)).toBe(0);
  } finally {
    real.close();
  }
});

it("a demoted pane's screen write lands over the stale claim it read, never over a hook claim that arrived since", async () => {
  t = new ScratchTmux('hlg');
  const s = t;
  const pane = s.start();
  const runner = await openRunner({ kind: 'name', name: s.name }, { mode: 'spawn', bin: 'tmux' });
  const T = 1_790_000_000_000;
  const claim = (state: string, at: number) => {
    for (const [k, v] of [
      ['@agent_state', state],
      ['@agent_source', 'hook'],
      ['@agent_evidence_at', String(at)],
      ['@agent_since', String(at)],
      ['@agent_stamped_at', String(at)],
      ['@agent_name', 'claude'],
    ]) {
      s.tmux('set-option', '-p', '-t', pane, k!, v!);
    }
  };
  const screenWrite = (claimAt: number) =>
    runner.run(
      chain(
        renderPlan(
          pane,
          {
            kind: 'publish',
            state: 'working',
            detail: null,
            source: 'capture',
            evidenceAt: T + 70_000,
            since: T + 70_000,
            stampedAt: T + 70_000,
            hash: 5n,
            pid: 0,
            name: 'claude',
            setAttention: false,
            episodeReset: false,
            guard: { kind: 'overrule_claim', claimAt },
          },
          { guarded: true, prev: null },
        ),
      ),
    );
  try {
    claim('idle', T);
    await screenWrite(T);
    expect([s.option(pane, '@agent_state'), s.option(pane, '@agent_source'), s.option(pane, '@agent_evidence_at')]).toEqual([
      'working',
      'capture',
      String(T + 70_000),
    ]);
    // The hook spoke between the listing (which saw the claim of T) and the write.
    claim('blocked', T + 69_000);
    await screenWrite(T);
    expect([s.option(pane, '@agent_state'), s.option(pane, '@agent_source'), s.option(pane, '@agent_evidence_at')]).toEqual([
      'blocked',
      'hook',
      String(T + 69_000),
    ]);
  } finally {
    runner.close();
  }
});
