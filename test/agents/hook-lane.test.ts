// Issue 34 part 3: the hook lane on the real agents. With `tma install-hooks` and a collector
// following the agent's tmux server, the agent's own PermissionRequest hook waits on the
// collector: `tma act approve` answers through it (the agent proceeds once: the fake model sees
// exactly one tool result) and `deny` answers a refusal (one tool result, a rejection, nothing
// ran). With no collector the hook falls back at once: the agent's dialog shows and approve types
// the keys. Claude Code at both versions the suite runs, and Codex.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalSocketPath, wakeDir, wakeSocketPath } from '../../collector/fleet/wake.js';
import { REPO, waitFor } from '../support/scratch-tmux.js';
import { FakeHub } from '../integration/fake-hub.js';
import { AgentPane } from './agent-pane.js';
import { AgentTmux } from './agent-tmux.js';
import { selected, versionsOf, type AgentName } from './agents.js';
import { PROMPT, until, waitForScreen } from './scenario.js';

interface Cell {
  label: string;
  act: 'approve' | 'deny';
  collector: boolean;
}

const CELLS: Cell[] = [
  { label: 'approve through the hook', act: 'approve', collector: true },
  { label: 'deny through the hook', act: 'deny', collector: true },
  { label: 'collector stopped: dialog, approve by keys', act: 'approve', collector: false },
];

interface Row {
  agent: string;
  version: string;
  cell: string;
  lane: string;
  outcome: string;
  results: number;
  rejected: boolean;
  ran: number;
  error?: string;
}

const rows: Row[] = [];

/** A collector following `server` with the same runtime dir as the agent's hooks (its wake socket). */
async function startCollector(server: AgentTmux): Promise<{ stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tma-hooklane-'));
  writeFileSync(join(dir, 'token'), 'tok\n');
  const hub = await FakeHub.start({ token: 'tok' });
  const env = { ...process.env, TMUX: '', TMUX_PANE: '', XDG_CONFIG_HOME: join(dir, 'cfg'), ...server.env };
  const c: ChildProcess = spawn(
    process.execPath,
    [join(REPO, 'bin/tma.js'), 'collector', '--hub', `ws://127.0.0.1:${hub.port}`, '--token-file', join(dir, 'token')],
    {
      env,
      stdio: 'ignore',
    },
  );
  await waitFor(() => hub.conns[0]?.frames.some((f) => f.frame.type === 'snapshot') === true, 'the collector', 30_000);
  await waitFor(() => existsSync(wakeSocketPath(canonicalSocketPath(server.socketPath()), wakeDir(env))), 'the wake socket', 10_000);
  return {
    stop: async () => {
      c.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      c.kill('SIGKILL');
      await hub.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const option = (p: AgentPane, key: string): string => {
  try {
    return p.tmux.tmux('show-options', '-pqv', '-t', p.pane, key).trim();
  } catch {
    return '';
  }
};

async function runCell(agent: AgentName, version: string, cell: Cell): Promise<Row> {
  const row: Row = { agent, version, cell: cell.label, lane: '-', outcome: '-', results: 0, rejected: false, ran: 0 };
  const tmux = new AgentTmux(`hl-${agent}${version.replace(/[^0-9]/g, '')}${cell.act[0]}${cell.collector ? 'c' : 'n'}`);
  tmux.start();
  let collector: { stop: () => Promise<void> } | null = null;
  const p = new AgentPane(tmux, { agent, version, rows: 40, hooks: true });
  try {
    if (cell.collector) collector = await startCollector(tmux);
    await p.start();
    await p.submit(PROMPT);
    if ((await until(() => p.fake.turns > 0, 60_000)) === null) throw new Error('the prompt never reached the model');
    if (cell.collector) {
      // The hook waits on the collector: the pane names the request (the dialog may or may not paint).
      if ((await until(() => option(p, '@tma_hook_request') !== '', 60_000)) === null) throw new Error(`no hook request on the pane:\n${p.screen()}`);
      row.lane = 'hook';
    } else {
      if ((await waitForScreen(p, p.setup.promptShown, 60_000)) === null) throw new Error(`the dialog never painted:\n${p.screen()}`);
      row.lane = option(p, '@tma_hook_request') === '' ? 'keys' : 'hook?';
    }
    await new Promise((r) => setTimeout(r, 1000));
    const r = await p.run(['act', cell.act, '--pane', p.pane, '--json']);
    try {
      row.outcome = (JSON.parse(r.stdout) as { outcome: string }).outcome;
    } catch {
      row.outcome = `exit ${r.code}: ${(r.stdout + r.stderr).slice(0, 100)}`;
    }
    await until(() => p.fake.toolResults.length > 0, 30_000);
    await until(() => p.fake.closed > 0, 30_000);
    await new Promise((r2) => setTimeout(r2, 1500));
  } catch (e) {
    row.error = (e as Error).message.slice(0, 1500);
  } finally {
    row.results = p.fake.toolResults.length;
    row.rejected = p.fake.toolResults.some((t) => /den|reject|not allowed|declin|refus/i.test(t.output));
    row.ran = p.ranCount();
    await p.close();
    await collector?.stop();
    tmux.kill();
  }
  return row;
}

const RUNS = (['claude', 'codex'] as AgentName[]).filter(selected).flatMap((agent) => versionsOf(agent).map((version) => ({ agent, version })));

describe.each(RUNS)('$agent $version', ({ agent, version }) => {
  it.each(CELLS.map((c) => [c.label, c] as const))(
    '%s',
    async (_label, cell) => {
      const row = await runCell(agent, version, cell);
      rows.push(row);
      expect.soft(row.error, 'the run went through').toBeUndefined();
      expect.soft(row.lane, 'the lane').toBe(cell.collector ? 'hook' : 'keys');
      expect.soft(row.outcome, 'the act outcome').toBe(cell.collector ? 'replied' : 'sent');
      expect.soft(row.results, 'the fake model saw exactly one tool result').toBe(1);
      if (cell.act === 'deny') {
        expect.soft(row.rejected, 'that result is a rejection').toBe(true);
        expect.soft(row.ran, 'nothing ran').toBe(0);
      } else expect.soft(row.ran, 'the command ran once').toBe(1);
    },
    300_000,
  );
});

afterAll(() => {
  const head = ['agent', 'version', 'cell', 'lane', 'act outcome', 'tool results', 'rejection', 'ran', 'error'];
  const lines = rows.map((r) => [
    r.agent,
    r.version,
    r.cell,
    r.lane,
    r.outcome,
    String(r.results),
    r.rejected ? 'yes' : 'no',
    String(r.ran),
    r.error ? r.error.split('\n')[0]! : '',
  ]);
  process.stdout.write(`\nhook lane on the real agents\n${[head, ...lines].map((l) => `| ${l.join(' | ')} |`).join('\n')}\n`);
});
