// A one-shot verb (a status line with no collector) pays for every tmux client it starts: the
// listing, the captures, and one call for all writes. The probe's stored answer comes with the
// server's facts, and the poll marker and rollups ride with the stamps.

import { describe, expect, it } from 'vitest';
import { TmuxError } from '../../collector/tmux/errors.js';
import type { TmuxRunner } from '../../collector/tmux/runner.js';
import { claudeEngine, paneListing } from '../support/one-pane-engine.js';

const T = 1_790_000_000_000;
const SCREEN = '╭────╮\n│ >  │\n╰────╯\n  ⏸ manual mode on (shift+tab to cycle)\n';

/** A fake tmux for one fresh claude pane; `calls` holds each client started, as its commands. */
function fakeTmux(opts: { storedProbe: string; failFirstWrite?: boolean }) {
  const calls: string[][][] = [];
  let failWrite = opts.failFirstWrite ?? false;
  const split = (argv: string[]) => {
    const cmds: string[][] = [[]];
    for (const a of argv)
      if (a === ';') cmds.push([]);
      else cmds[cmds.length - 1]!.push(a);
    return cmds;
  };
  const runner: TmuxRunner = {
    mode: 'spawn',
    async run(argv) {
      const cmds = split(argv);
      calls.push(cmds);
      if (cmds[0]![0] === 'show-options') return `${opts.storedProbe}\n`;
      if (cmds[0]![0] === 'display-message') return `/tmp/tmux-0/fake\u001f1\u001f2\u001f${opts.storedProbe}\n`;
      if (cmds[0]![0] === 'list-clients') return '';
      if (failWrite && cmds.length > 1) {
        failWrite = false;
        throw new TmuxError('failed', 'no such pane');
      }
      return '';
    },
    async runChain(cmds) {
      calls.push(cmds.map((c) => [...c]));
      if (cmds[0]![0] === 'list-panes') return [paneListing('✳ Tidy up'), '', '', `/tmp/tmux-0/fake\u001f1\u001f2\u001f${opts.storedProbe}\n`];
      return cmds.map((c) => (c[0] === 'capture-pane' ? SCREEN : c[0] === 'display-message' ? '⠂ Tidy up\n' : ''));
    },
    close() {},
  };
  return { runner, calls };
}

const verbs = (call: string[][]) => call.map((c) => c[0]);
const writesKey = (calls: string[][][], key: string) => calls.filter((call) => call.some((c) => c[0] === 'set-option' && c.includes(key)));

describe('tmux clients of a one-shot cycle', () => {
  it('lists, captures and writes in three calls when the probe is stored; the poll marker goes with the stamp', async () => {
    const { runner, calls } = fakeTmux({ storedProbe: '1' });
    const res = await claudeEngine(runner, () => T).cycle();
    expect(res.rows.map((r) => [r.pane, r.state])).toEqual([['%1', 'working']]);
    expect(calls.map(verbs)).toHaveLength(3);
    expect(calls[0]![0]![0]).toBe('list-panes');
    expect(verbs(calls[1]!)).toEqual(['capture-pane', 'display-message']);
    const write = calls[2]!;
    const stateAt = write.findIndex((c) => c.includes('@agent_state'));
    const pollAt = write.findIndex((c) => c.includes('@tma_last_poll'));
    expect(stateAt).toBeGreaterThanOrEqual(0);
    expect(pollAt).toBeGreaterThan(stateAt);
    expect(calls.flat().some((c) => c[0] === 'show-options' && c.includes('@tma_setpf_ok'))).toBe(false);
  });

  it('still probes when no answer is stored', async () => {
    const { runner, calls } = fakeTmux({ storedProbe: '' });
    await claudeEngine(runner, () => T).cycle();
    expect(calls.flat().some((c) => c[0] === 'show-options' && c.includes('@tma_setpf_ok'))).toBe(true);
  });

  it('a write call that fails is retried pane by pane, and the poll marker is written after it', async () => {
    const { runner, calls } = fakeTmux({ storedProbe: '1', failFirstWrite: true });
    const res = await claudeEngine(runner, () => T).cycle();
    expect(res.rows.map((r) => r.state)).toEqual(['working']);
    const polls = writesKey(calls, '@tma_last_poll');
    // Once in the call that failed, once on its own after the pane's retry.
    expect(polls).toHaveLength(2);
    const retry = calls.findIndex((call, i) => i > calls.indexOf(polls[0]!) && call.some((c) => c[0] === 'set-option' && c.includes('@agent_state')));
    expect(retry).toBeGreaterThan(calls.indexOf(polls[0]!));
    expect(calls.indexOf(polls[1]!)).toBeGreaterThan(retry);
  });
});
