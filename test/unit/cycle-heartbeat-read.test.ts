// A one-shot cycle judges the collector's heartbeat at the moment tmux answered: a heartbeat
// written while the listing was being read is current, not "from the future".

import { expect, it } from 'vitest';
import type { TmuxRunner } from '../../collector/tmux/runner.js';
import { AGENT_PID, claudeEngine, paneListing } from '../support/one-pane-engine.js';

const T = 1_790_000_000_000;

/** One claude pane whose working stamp is 8 s old: only a live heartbeat lets it stand. */
const listing = () =>
  paneListing('✳ Tidy up', {
    '@agent_name': 'claude',
    '@agent_state': 'working',
    '@agent_source': 'capture',
    '@agent_pid': String(AGENT_PID),
    '@agent_evidence_at': String(T - 8000),
    '@agent_since': String(T - 8000),
    '@agent_stamped_at': String(T - 8000),
  });

it('takes a heartbeat written while tmux listed the panes as current: no capture, no write', async () => {
  let clock = T;
  const sent: string[][] = [];
  const runner: TmuxRunner = {
    mode: 'spawn',
    async run(argv) {
      sent.push(argv);
      if (argv[0] === 'display-message') return '/tmp/tmux-0/fake\u001f1\u001f2\n';
      return '';
    },
    async runChain(cmds) {
      sent.push(...cmds);
      if (cmds[0]![0] !== 'list-panes') return cmds.map(() => '');
      // The collector renews its heartbeat 10 ms into the read; tmux answers 20 ms in.
      clock = T + 20;
      return [listing(), '', String(T + 10)];
    },
    close() {},
  };
  const engine = claudeEngine(runner, () => clock);
  const res = await engine.cycle();
  expect(res.rows.map((r) => [r.pane, r.state])).toEqual([['%1', 'working']]);
  expect(sent.filter((c) => c[0] === 'capture-pane')).toEqual([]);
  expect(sent.flat()).not.toContain('@agent_stamped_at');
});
