// install-hooks against configs that are not what they seem: a link to /dev/zero, a FIFO, a
// 60 MB file, two "hooks" keys, invalid UTF-8. Each is refused in under a second with one line,
// under 100 MB of memory, the file untouched. A symlinked config is written at its target after
// saying so, by rename; --check reads duplicate keys as the agent does (the last one wins).

import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { REPO, ScratchTmux } from '../support/scratch-tmux.js';

let t: ScratchTmux;
let home: string;
beforeEach(() => {
  t = new ScratchTmux('ihx');
  t.start();
  home = mkdtempSync(join(tmpdir(), 'tma-home-'));
  mkdirSync(join(home, '.claude'), { recursive: true });
});
afterEach(() => {
  t.kill();
  rmSync(home, { recursive: true, force: true });
});

const settings = () => join(home, '.claude', 'settings.json');

/** The real CLI under /usr/bin/time: exit code, output, peak RSS, CPU and wall time. */
function run(args: string[]): { code: number; stdout: string; stderr: string; rssKb: number; cpuSecs: number; secs: number } {
  const stat = join(home, 'time.out');
  const r = spawnSync('/usr/bin/time', ['-o', stat, '-f', '%M %U %S %e', process.execPath, join(REPO, 'bin/tma.js'), '-L', t.name, ...args], {
    env: {
      ...process.env,
      TMUX: '',
      TMUX_PANE: '',
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      TMA_CONFIG_DIR: '',
      CODEX_HOME: '',
      PI_CODING_AGENT_DIR: '',
    },
    input: '',
    encoding: 'utf8',
    timeout: 20_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  const [rss, user, sys, secs] = readFileSync(stat, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  return { code: r.status ?? 128, stdout: r.stdout, stderr: r.stderr, rssKb: rss!, cpuSecs: user! + sys!, secs: secs! };
}

const HOSTILE: { name: string; make: (p: string) => void; line: RegExp }[] = [
  { name: 'a link to /dev/zero', make: (p) => symlinkSync('/dev/zero', p), line: /is a device, not a regular file/ },
  { name: 'a FIFO', make: (p) => spawnSync('mkfifo', [p]), line: /is a FIFO, not a regular file/ },
  { name: 'a 60 MB file', make: (p) => writeFileSync(p, `{"model": "${'x'.repeat(60 * 1024 * 1024)}"}\n`), line: /is 60\.0 MiB, over the 4\.0 MiB/ },
  { name: 'two "hooks" keys', make: (p) => writeFileSync(p, `{ "hooks": {}, "model": "opus", "hooks": { "Stop": [] } }\n`), line: /duplicate key "hooks"/ },
  {
    name: 'invalid UTF-8',
    make: (p) => writeFileSync(p, Buffer.concat([Buffer.from('{ "model": "op'), Buffer.from([0xff, 0xfe]), Buffer.from('us" }\n')])),
    line: /not valid UTF-8 \(at byte 14\)/,
  },
];

it.each(HOSTILE)(
  'refuses $name in under a second with one line, small, the file unchanged',
  ({ make, line }) => {
    const p = settings();
    make(p);
    const before = lstatSync(p);
    const bytes = before.isFile() ? readFileSync(p) : null;
    const r = run(['install-hooks', 'claude', '--yes']);
    expect(r.code).not.toBe(0);
    const err = r.stderr.trim().split('\n');
    expect(err, r.stderr).toHaveLength(1);
    expect(err[0]).toMatch(line);
    expect(r.stdout).not.toContain('proposed change');
    // Under a second of work, Node's start included; the wall clock only has to rule out a hang,
    // since a machine this test shares may take longer than a second just to schedule it.
    expect(r.cpuSecs).toBeLessThan(1);
    expect(r.secs).toBeLessThan(5);
    expect(r.rssKb).toBeLessThan(100 * 1024);
    const after = lstatSync(p);
    expect([after.ino, after.mode, after.size]).toEqual([before.ino, before.mode, before.size]);
    if (bytes) expect(readFileSync(p).equals(bytes)).toBe(true);
    if (before.isSymbolicLink()) expect(readlinkSync(p)).toBe('/dev/zero');
  },
  30_000,
);

it('writes a symlinked config at its target after saying so, by rename, keeping the link', () => {
  const real = join(home, 'dotfiles', 'claude.json');
  mkdirSync(join(home, 'dotfiles'));
  writeFileSync(real, '{\n  "model": "opus"\n}\n', { mode: 0o600 });
  symlinkSync(real, settings());
  const ino = statSync(real).ino;
  const r = run(['install-hooks', 'claude', '--yes']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain(`tma: ${settings()} is a symbolic link; the change is written at its target ${real}`);
  expect(r.stdout.indexOf('is a symbolic link')).toBeLessThan(r.stdout.indexOf('proposed change'));
  expect(lstatSync(settings()).isSymbolicLink()).toBe(true);
  expect(readFileSync(real, 'utf8')).toContain('tma-hook');
  // A new inode: the file was replaced whole, never rewritten in place; its mode kept.
  expect(statSync(real).ino).not.toBe(ino);
  expect(statSync(real).mode & 0o777).toBe(0o600);
});

it('--check reads two "hooks" keys as the agent does: the last one counts', () => {
  const p = settings();
  writeFileSync(p, '{\n  "model": "opus"\n}\n');
  expect(run(['install-hooks', 'claude', '--yes']).code).toBe(0);
  expect(run(['install-hooks', 'claude', '--check']).stdout).toContain('hooks OK');
  const { hooks, ...rest } = JSON.parse(readFileSync(p, 'utf8')) as { hooks: unknown };
  const body = (first: unknown, last: unknown) =>
    `{ "hooks": ${JSON.stringify(first)}, ${JSON.stringify(rest).slice(1, -1)}, "hooks": ${JSON.stringify(last)} }\n`;
  // Ours in the first, which the agent ignores: not OK.
  writeFileSync(p, body(hooks, {}));
  expect(JSON.parse(readFileSync(p, 'utf8'))).toHaveProperty('model', 'opus');
  const hidden = run(['install-hooks', 'claude', '--check']);
  expect(hidden.stdout).not.toContain('hooks OK');
  expect(hidden.code).toBe(1);
  // Ours in the last, which the agent reads: OK.
  writeFileSync(p, body({}, hooks));
  expect(run(['install-hooks', 'claude', '--check']).stdout).toContain('hooks OK');
});
