// Killing the tmux server a `tma watch` runs in: the view ends within a bound, with the hang-up
// code, no Node assertion on stderr (node::ResetStdio on a hung-up terminal), and no child left.

import { existsSync, readFileSync } from 'node:fs';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { ScratchTmux, waitFor } from '../support/scratch-tmux.js';
import { tmaLine } from '../support/tui-pane.js';

const servers: ScratchTmux[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.kill();
});

/** Live processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));

test('the terminal goes away under a running watch: it exits quickly, cleanly, and leaves no child', { timeout: 30_000 }, async () => {
  const agents = new ScratchTmux('hupagent');
  servers.push(agents);
  await agents.standIn(agents.start(), 'claude', 'claude-permission-dialog.txt');
  const viewer = new ScratchTmux('hupviewer');
  servers.push(viewer);
  const err = join(viewer.dir, 'watch.err');
  const line = tmaLine({ XDG_CONFIG_HOME: join(viewer.dir, 'cfg'), XDG_STATE_HOME: join(viewer.dir, 'st') }, ['--socket-name', agents.name, 'watch']);
  // `exec`: the pane's own process is the watch, so its pid is known.
  viewer.tmux('new-session', '-d', '-s', 'v', '-x', '150', '-y', '30', `exec ${line} 2>${err}`);
  const pid = Number(viewer.tmux('display-message', '-p', '-t', 'v', '#{pane_pid}').trim());
  await waitFor(() => viewer.tmux('capture-pane', '-p', '-t', 'v').includes('BLOCKED (1)'), 'the watch showing the agent', 15_000);
  const kids = childrenOf(pid);
  expect(kids.length).toBeGreaterThan(0); // its tmux control client on the agents' server
  const killedAt = Date.now();
  viewer.tmux('kill-server');
  await waitFor(() => !alive(pid), 'the watch gone', 5000);
  console.log(`watch-hangup: the watch ended ${Date.now() - killedAt} ms after its tmux server was killed`);
  const stderr = readFileSync(err, 'utf8');
  expect(stderr).not.toContain('Assertion');
  expect(stderr).not.toContain('ResetStdio');
  await waitFor(() => kids.every((k) => !alive(k)), `no child of the watch left (${kids.join(' ')})`, 5000);
});
