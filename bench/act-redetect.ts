// What answered-once costs an act: the re-detection (one capture and fold of the pane over the
// client the broker already holds) a keys action does when the pane's stamp is no newer than the
// pane's last answer. Measured in one process on a scratch server with one stand-in claude
// showing a permission dialog, with the same broker a collector runs:
//   baseline   an approve with no answered mark on the pane (no re-detection)
//   re-detect  an approve after a mark for another prompt, newer than the stamp (re-detection,
//              then it fires as the prompt differs)
// Run after `npm run build`:  node dist/bench/act-redetect.js [rounds]
// Prints medians and the difference; a measurement, never a test.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fireAction } from '../collector/act/broker.js';
import { formatAnswered } from '../collector/core/prompt-id.js';
import { DEFAULT_FOLD } from '../collector/core/types.js';
import { Engine } from '../collector/engine/cycle.js';
import { ANSWERED_KEY } from '../collector/engine/prompt-writes.js';
import { loadActions, loadAgentManifests } from '../collector/manifest-files.js';
import { readProcesses } from '../collector/tmux/proc-table.js';
import { openRunner } from '../collector/tmux/runner.js';
import { privateTmuxDir } from './scratch-server.js';

const REPO = resolve(fileURLToPath(import.meta.url), '../../..');
const ROUNDS = Number(process.argv[2] ?? 30);
const name = `tma-bench-act-${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), 'tma-bench-act-'));
privateTmuxDir(dir);
const tmux = (...a: string[]) => execFileSync('tmux', ['-u', '-L', name, '-f', '/dev/null', ...a], { encoding: 'utf8' });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  try {
    symlinkSync('/usr/bin/python3', join(dir, 'claude'));
    tmux('new-session', '-d', '-s', 'bench', '-x', '80', '-y', '24', 'bash --norc --noprofile -i');
    const pane = tmux('display-message', '-p', '-t', 'bench', '#{pane_id}').trim();
    const control = join(dir, 'control');
    writeFileSync(control, join(REPO, 'test/fixtures/claude-permission-dialog.txt'));
    tmux('send-keys', '-t', pane, `${join(dir, 'claude')} ${join(REPO, 'test/support/standin.py')} ${control} /dev/null`, 'Enter');
    for (let i = 0; i < 100 && tmux('display-message', '-p', '-t', pane, '#{pane_current_command}').trim() !== 'claude'; i++) spawnSync('sleep', ['0.1']);

    const runner = await openRunner({ kind: 'name', name }, { mode: 'control', bin: 'tmux' });
    const engine = new Engine({ runner, manifests: loadAgentManifests({ env: {} }).manifests, fold: DEFAULT_FOLD, host: 'bench', readProcs: readProcesses });
    const set = loadActions({ env: {} });
    if (!set.ok) throw new Error('bundled actions did not load');
    const approve = set.actions.find((a) => a.name === 'approve')!;
    const env = { ...process.env, XDG_STATE_HOME: dir };
    // A long freshness window: the stamp is never stale, so only the answered mark forces a look.
    const fire = () => fireAction({ runner, engine, action: approve, pane, env, freshnessMs: 3_600_000, stdio: 'ignore' });
    await engine.cycle();

    const time = async (prepare: () => Promise<unknown>): Promise<number> => {
      const samples: number[] = [];
      for (let i = 0; i <= ROUNDS; i++) {
        await prepare();
        const t0 = process.hrtime.bigint();
        const r = await fire();
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (r.outcome !== 'sent') throw new Error(`approve did not fire: ${r.outcome} ${r.reason}`);
        if (i > 0) samples.push(ms);
      }
      return median(samples);
    };
    const unmark = () => runner.run(['set-option', '-p', '-u', '-t', pane, ANSWERED_KEY]);
    // Another prompt answered a moment after the stamp: the broker must look before it fires.
    const markOther = () => runner.run(['set-option', '-p', '-t', pane, ANSWERED_KEY, formatAnswered({ promptId: 'ffffffffffffffff', at: Date.now() + 1 })]);

    const base = await time(unmark);
    const redetect = await time(markOther);
    console.log(`approve on one blocked pane, median of ${ROUNDS}, one long-lived control client`);
    console.log(`${'baseline: no answered mark, no re-detection'.padEnd(56)} ${base.toFixed(2).padStart(8)} ms`);
    console.log(
      `${'with re-detection (stamp older than the last answer)'.padEnd(56)} ${redetect.toFixed(2).padStart(8)} ms   ${(redetect / base).toFixed(2)}× baseline`,
    );
    console.log(`re-detection extra cost per act: ${(redetect - base).toFixed(2)} ms`);
    runner.close();
  } finally {
    spawnSync('tmux', ['-L', name, 'kill-server']);
    rmSync(join(process.env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid!()}`, name), { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
