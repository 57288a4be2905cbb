// What a prompt asks travels to the hub by default: a real collector whose config.toml says
// nothing about [remote] share_prompt publishes the pending summary, and says in its hello that
// it shares; one that sets share_prompt = false keeps it and says so.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { FleetDocument } from '../../shared/fleet.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';
import { REPO, ScratchTmux } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let scratch: ScratchTmux | undefined;
let hub: TestHub | undefined;
let collector: ChildProcess | undefined;
let dir = '';
let log = '';

afterEach(async () => {
  collector?.kill('SIGKILL');
  await hub?.close();
  scratch?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
  collector = hub = scratch = undefined;
});

async function until(fleet: () => Promise<FleetDocument>, cond: (d: FleetDocument) => boolean, what: string): Promise<FleetDocument> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const doc = await fleet();
    if (cond(doc)) return doc;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(doc)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function fleetWith(config: string): Promise<() => Promise<FleetDocument>> {
  dir = mkdtempSync(join(tmpdir(), 'tma-share-'));
  for (const d of ['state', 'run', 'cfg/tma']) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, 'build1'), `${TOKENS.build1}\n`);
  writeFileSync(join(dir, 'cfg/tma/config.toml'), config);
  scratch = new ScratchTmux('share');
  await scratch.standIn(scratch.start(), 'claude', SCREENS.claudeBlocked);
  hub = await startTestHub({ heartbeatMs: 500 });
  log = '';
  collector = spawn(
    process.execPath,
    [
      join(REPO, 'bin/tma.js'),
      'collector',
      '--hub',
      `ws://127.0.0.1:${hub.port}`,
      '--token-file',
      join(dir, 'build1'),
      '--socket-name',
      scratch.name,
      '--interval',
      '0.3',
      '--host-name',
      'build1',
    ],
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
  collector.stderr!.on('data', (d) => (log += d));
  const h = hub;
  return async () => (await (await h.get('/v1/agents')).json()) as FleetDocument;
}

it('a host that says nothing shares what its prompt asks, and says it does', async () => {
  const fleet = await fleetWith('[remote]\nallow_actions = ["approve"]\n');
  const doc = await until(fleet, (d) => d.agents.some((r) => r.state === 'blocked' && r.pending_summary !== null), 'the blocked row with its summary');
  expect(doc.agents[0]!.pending_summary).toBe('Bash command: rm -rf build/.cache');
  expect(doc.hosts.find((h) => h.host === 'build1')!.shares_prompt).toBe(true);
  // Shared with the hub, never logged by either side.
  for (const text of [...hub!.logLines, log]) expect(text).not.toContain('rm -rf build/.cache');
});

it('a host with share_prompt = false keeps it, and the hub learns that it does', async () => {
  const fleet = await fleetWith('[remote]\nshare_prompt = false\n');
  // The prompt id is written in the same cycle as the summary: once it is there, a null summary
  // was withheld, not late.
  const doc = await until(fleet, (d) => d.agents.some((r) => r.state === 'blocked' && r.prompt_id != null), 'the identified blocked row');
  expect(doc.agents[0]!.pending_summary).toBeNull();
  expect(doc.hosts.find((h) => h.host === 'build1')!.shares_prompt).toBe(false);
});
