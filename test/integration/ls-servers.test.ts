// `ls` a person reads, and one-shot verbs over every tmux server of the user. Two scratch servers
// with a stand-in claude each (one blocked, one idle) and a third with no agent, all under one
// private TMUX_TMPDIR so that nothing else on the machine is in the scan.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, ScratchTmux, tma } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let tmp: string;
let saved: string | undefined;
let a: ScratchTmux;
let b: ScratchTmux;
let empty: ScratchTmux;

/** The CLI on a pseudo-terminal (util-linux `script`), as a person at a terminal runs it. */
function onTerminal(args: string[]): string {
  const cmd = [process.execPath, join(REPO, 'bin/tma.js'), ...args].map((s) => `'${s}'`).join(' ');
  const out = execFileSync('script', ['-qec', cmd, '/dev/null'], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { ...process.env, TMUX: '', TMUX_PANE: '', COLUMNS: '200', XDG_CONFIG_HOME: join(tmp, 'no-config') },
  });
  return out.replace(/\r\n/g, '\n');
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tma-ls-servers-'));
  saved = process.env.TMUX_TMPDIR;
  // Scratch servers, their sockets and every CLI run below see only this directory.
  process.env.TMUX_TMPDIR = tmp;
  a = new ScratchTmux('lsa');
  await a.standIn(a.start(), 'claude', SCREENS.claudeBlocked);
  b = new ScratchTmux('lsb');
  await b.standIn(b.start(), 'claude', SCREENS.claudeIdle);
  empty = new ScratchTmux('lse');
  empty.start();
});

afterAll(() => {
  for (const s of [a, b, empty]) s?.kill();
  if (saved === undefined) delete process.env.TMUX_TMPDIR;
  else process.env.TMUX_TMPDIR = saved;
  rmSync(tmp, { recursive: true, force: true });
});

describe('outside tmux with no -L/-S', () => {
  it('ls piped is the twelve TSV columns, one row per agent of every server', async () => {
    const r = await tma(['ls']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // Only the final newline goes: a row's last column (the worktree flag) may be empty.
    const lines = r.stdout.replace(/\n$/, '').split('\n');
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(l.split('\t')).toHaveLength(12);
    expect(lines.map((l) => l.split('\t')[2]).sort()).toEqual(['blocked', 'idle']);
    // --tsv forces the same form.
    expect((await tma(['ls', '--tsv'])).stdout).toBe(r.stdout);
  });

  it('ls --json names each row with its server', async () => {
    const doc = JSON.parse((await tma(['ls', '--json'])).stdout) as { agents: { server: string; state: string }[] };
    expect(doc.agents.map((r) => [r.server, r.state]).sort()).toEqual(
      [
        [a.socketPath(), 'blocked'],
        [b.socketPath(), 'idle'],
      ].sort(),
    );
  });

  it('ls on a terminal is a table: header, server column, ages, words', () => {
    const out = onTerminal(['ls']);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SERVER\s+PANE\s+AGENT\s+STATE\s+AGE\s+WHERE\s+REPO\s+FLAGS\s+TITLE/);
    expect(lines).toHaveLength(3);
    const blocked = lines.find((l) => l.includes('blocked'))!;
    expect(blocked).toContain(a.name);
    expect(blocked).toMatch(/\s\d+[smhd]\s/);
    expect(blocked).toContain('attention');
    // No epoch milliseconds and no bare 1 flags.
    expect(out).not.toMatch(/\d{13}/);
    expect(out).not.toMatch(/\t/);
  });

  it('status counts the agents of every server', async () => {
    const doc = JSON.parse((await tma(['status', '--format', 'json'])).stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({ counts: { blocked: 1, idle: 1 } });
  });
});

describe('a server named', () => {
  it('keeps to that server', async () => {
    const r = await tma(['-L', a.name, 'ls']);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(1);
  });

  it('with no agent there, names the servers where agents run', async () => {
    const r = await tma(['-L', empty.name, 'ls']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^tma: no agent panes here; agents run on /);
    expect(r.stderr).toContain(`-L ${a.name} (1)`);
    expect(r.stderr).toContain(`-L ${b.name} (1)`);
  });

  it('not running: says so and names the servers where agents run', async () => {
    const r = await tma(['-L', 'tma-not-running', 'ls']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^tma: no tmux server running; agents run on /);
    expect(r.stderr).toContain(`-L ${a.name} (1)`);
  });
});
