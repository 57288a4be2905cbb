// The working→idle dwell on a real tmux server, for a watched engine whose working screen stood
// perfectly still past the dwell before it turned idle. The engine's clock is a test clock, so
// the 10 s still spell costs no wall time; tmux, the stand-in agent and the writes are real.

import { afterEach, expect, it } from 'vitest';
import { loadManifestSet } from '../../collector/core/manifest-load.js';
import { DEFAULT_FOLD } from '../../collector/core/types.js';
import { Engine } from '../../collector/engine/cycle.js';
import { bundledManifestDir, readManifestFiles } from '../../collector/manifest-files.js';
import { readProcesses } from '../../collector/tmux/proc-table.js';
import { openRunner } from '../../collector/tmux/runner.js';
import { ScratchTmux } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux | null = null;
afterEach(() => {
  t?.kill();
  t = null;
});

it('a working screen still for 10 s that turns idle is held for the dwell from its paint, then idle', async () => {
  t = new ScratchTmux('dwl');
  const pane = t.start();
  const agent = await t.standIn(pane, 'claude', SCREENS.claudeWorking);
  const runner = await openRunner({ kind: 'name', name: t.name }, { mode: 'spawn', bin: 'tmux' });
  const t0 = Math.floor(Date.now() / 1000) * 1000;
  let clock = t0;
  const manifests = loadManifestSet(readManifestFiles(bundledManifestDir()), []).manifests;
  const engine = new Engine({ runner, manifests, fold: DEFAULT_FOLD, host: 'h', readProcs: readProcesses, now: () => clock });
  engine.watchOutput(() => true);
  const stateOf = async () => (await engine.cycle()).rows.find((r) => r.pane === pane)?.state;
  try {
    expect(await stateOf()).toBe('working');
    const evidence = t.option(pane, '@agent_evidence_at');
    expect(evidence).toBe(String(t0));
    clock = t0 + 5000;
    expect(await stateOf()).toBe('working');
    // Still, so nothing was rewritten: the stored evidence time is the first look's.
    expect(t.option(pane, '@agent_evidence_at')).toBe(evidence);

    clock = t0 + 10_000;
    await agent.paint(SCREENS.claudeIdle);
    engine.markPainted([pane]); // what the output watch does once the paint went quiet
    clock = t0 + 10_200;
    expect(await stateOf()).toBe('working');
    expect(t.option(pane, '@agent_state')).toBe('working');
    clock = t0 + 12_500;
    expect(await stateOf()).toBe('working');
    clock = t0 + 13_300;
    expect(await stateOf()).toBe('idle');
    expect(t.option(pane, '@agent_state')).toBe('idle');
    expect(t.option(pane, '@agent_attention')).toBe('1');
  } finally {
    runner.close();
  }
});
