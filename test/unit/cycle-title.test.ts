// The cycle judges a screen under the title read next to it, not the one from the listing.

import { describe, expect, it } from 'vitest';
import type { TmuxRunner } from '../../collector/tmux/runner.js';
import { claudeEngine, paneListing } from '../support/one-pane-engine.js';

/** Answers the few commands one cycle sends; records every write. */
function fakeRunner(listTitle: string, liveTitle: string, screen: string): { runner: TmuxRunner; writes: string[][] } {
  const writes: string[][] = [];
  const runner: TmuxRunner = {
    mode: 'spawn',
    async run(argv) {
      if (argv[0] === 'display-message') return '/tmp/tmux-0/fake\u001f1\u001f2\n';
      if (argv[0] === 'show-options') return '1\n';
      if (argv[0] === 'list-clients') return '';
      writes.push(argv);
      return '';
    },
    async runChain(cmds) {
      if (cmds[0]![0] === 'list-panes') return [paneListing(listTitle), ''];
      return cmds.map((c) => (c[0] === 'capture-pane' ? screen : c[0] === 'display-message' ? `${liveTitle}\n` : ''));
    },
    close() {},
  };
  return { runner, writes };
}

const SCREEN = '╭────╮\n│ >  │\n╰────╯\n  ⏸ manual mode on (shift+tab to cycle)\n';

describe('title and screen are read together', () => {
  it('a spinner title set after the listing counts with the screen it came with', async () => {
    const { runner, writes } = fakeRunner('✳ Tidy up', '⠂ Tidy up', SCREEN);
    const engine = claudeEngine(runner, () => 1_790_000_000_000);
    const res = await engine.cycle();
    expect(res.rows.map((r) => [r.pane, r.state])).toEqual([['%1', 'working']]);
    const stateWrite = writes.flat().findIndex((a) => a === '@agent_state');
    expect(writes.flat()[stateWrite + 1]).toContain('working');
  });
});
