// Stamps that change nothing are not rewritten: a collector watching a server's output leaves a
// static agent pane's options alone cycle after cycle, while its per-server heartbeat
// (@tma_collector_at) keeps one-shot readers from recapturing, and a changed screen is still seen.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { FakeHub } from './fake-hub.js';

let scratch: ScratchTmux | null = null;
let hub: FakeHub | null = null;
let child: ChildProcess | null = null;
let dir = '';

afterEach(async () => {
  child?.kill('SIGKILL');
  child = null;
  await hub?.close();
  hub = null;
  scratch?.kill();
  scratch = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a static agent pane is not re-stamped, one-shot readers still trust it, and a new screen is stamped', async () => {
  scratch = new ScratchTmux('qst');
  const s = scratch;
  const pane = s.start();
  const agent = await s.standIn(pane, 'claude', 'claude-working.txt');
  dir = mkdtempSync(join(tmpdir(), 'tma-quiet-stamps-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'secret-token-1\n');
  const env = { ...process.env, TMUX: '', TMUX_PANE: '', XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') };
  hub = await FakeHub.start({ token: 'secret-token-1', welcome: () => null });
  child = spawn(
    process.execPath,
    [join(REPO, 'bin/tma.js'), 'collector', '--hub', `ws://127.0.0.1:${hub.port}`, '--token-file', tokenFile, '--socket-name', s.name, '--interval', '0.3', '--host-name', 'box'],
    { env, stdio: ['ignore', 'ignore', 'ignore'] },
  );
  const beat = () => Number(s.tmux('show-options', '-sqv', '@tma_collector_at').trim() || 0);
  const stampOf = () => s.option(pane, '@agent_stamped_at');
  await waitFor(() => s.option(pane, '@agent_state') === 'working' && beat() > 0, 'working stamp and a heartbeat', 15_000);

  // Every option of the pane, as one text: nothing of it may move while the screen stands still.
  const options = () => s.tmux('show-options', '-p', '-t', pane);
  // The first watched look happens once the first stamp is past the 3 s freshness window.
  await sleep(4000);
  const settled = options();
  const stamp = stampOf();
  const beat0 = beat();
  // Well past the freshness window again, at 0.3 s polling: the old poll re-stamped twice here.
  await sleep(4500);
  expect(stampOf()).toBe(stamp);
  expect(options()).toBe(settled);
  expect(beat()).toBeGreaterThan(beat0);

  // A one-shot reader takes the state from the stamp the heartbeat vouches for: no capture, so no write.
  const ls = await tma(['--socket-name', s.name, 'ls', '--json'], { env });
  expect(ls.code).toBe(0);
  const rows = (JSON.parse(ls.stdout) as { agents: { pane: string; state: string }[] }).agents;
  expect(rows.find((r) => r.pane === pane)?.state).toBe('working');
  expect(stampOf()).toBe(stamp);

  // A screen that changes is still seen, and stamped, within the output watch's reach.
  await agent.paint('claude-permission-dialog.txt');
  await waitFor(() => s.option(pane, '@agent_state') === 'blocked', 'blocked stamp', 10_000);
  expect(Number(stampOf())).toBeGreaterThan(Number(stamp));
}, 60_000);
