// The prompt on screen, as the hub shows it (issue 37): an old dialog still in the pane's history
// and a different one on screen; the hub row the page reads (/v1/agents) and the hub's fleet
// notification (/v1/notifications) carry the command on screen, never the old one.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { FleetDocument } from '../../shared/fleet.js';
import { killChildren } from '../support/children.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';
import { REPO, ScratchTmux } from '../support/scratch-tmux.js';
import { when } from '../support/when.js';

const SCROLLBACK = join(REPO, 'test/integration/screens/claude-scrollback-new-prompt.txt');
const NEW = 'Bash command: npm publish --dry-run';

const children: ChildProcess[] = [];
let scratch: ScratchTmux | null = null;
let hub: TestHub | null = null;
let dir = '';

afterEach(async () => {
  await killChildren(children);
  await hub?.close();
  hub = null;
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

it('the hub row and the fleet notification show the command on screen, not the one in history', { timeout: 90_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-onscreen-fleet-'));
  for (const d of ['state', 'run', 'cfg/tma']) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, 'build1'), `${TOKENS.build1}\n`);
  writeFileSync(join(dir, 'cfg/tma/config.toml'), `[notify]\non = ["blocked"]\nlog = "${join(dir, 'notify.jsonl')}"\n`);
  scratch = new ScratchTmux('onscreenfleet');
  const s = scratch;
  const a = await s.standIn(s.start(), 'claude', 'claude-idle.txt');
  hub = await startTestHub({ heartbeatMs: 500 });
  let log = '';
  const collector = spawn(
    process.execPath,
    [join(REPO, 'bin/tma.js'), 'collector', '--hub', `ws://127.0.0.1:${hub.port}`, '--token-file', join(dir, 'build1')].concat([
      '--socket-name',
      s.name,
      '--interval',
      '0.3',
      '--host-name',
      'build1',
    ]),
    {
      env: {
        ...process.env,
        TMUX: '',
        TMUX_PANE: '',
        XDG_STATE_HOME: join(dir, 'state'),
        XDG_RUNTIME_DIR: join(dir, 'run'),
        XDG_CONFIG_HOME: join(dir, 'cfg'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  children.push(collector);
  collector.stderr.on('data', (d) => (log += d));
  const h = hub;
  const agents = async () => ((await (await h.get('/v1/agents')).json()) as FleetDocument).agents;
  await when(`the idle row on the hub; collector: ${log.slice(-400)}`, async () => (await agents()).find((r) => r.pane === a.pane && r.state === 'idle'));

  // The new prompt is painted with the old dialog scrolled into the history above it.
  await a.paint(SCROLLBACK);
  expect(s.tmux('capture-pane', '-p', '-t', a.pane, '-S', '-50')).toContain('rm -rf build/');
  expect(s.tmux('capture-pane', '-p', '-t', a.pane)).not.toContain('rm -rf build/');

  const row = await when('the blocked row on the hub', async () => (await agents()).find((r) => r.pane === a.pane && r.state === 'blocked'));
  expect(row.pending_summary).toBe(NEW);

  type Note = { trigger: string; pane: string; pending_summary: string | null };
  const notes = async () => ((await (await h.get('/v1/notifications')).json()) as { notifications: Note[] }).notifications;
  await when('the blocked notification on the hub', async () => (await notes()).find((n) => n.pane === a.pane && n.trigger === 'blocked'));
  const blocked = (await notes()).filter((n) => n.pane === a.pane && n.trigger === 'blocked');
  expect(blocked.map((n) => n.pending_summary)).toEqual([NEW]);
});
