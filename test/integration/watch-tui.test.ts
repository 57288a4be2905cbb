// `tma watch` in a real terminal: a pane of a scratch tmux server, driven with send-keys and read
// with capture-pane, over stand-in agents that log every byte they receive.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ScratchTmux, type StandIn } from '../support/scratch-tmux.js';
import { tmaLine, tuiPane, type TuiPane } from '../support/tui-pane.js';

let s: ScratchTmux;
let env: Record<string, string>;

beforeEach(() => {
  s = new ScratchTmux('watch');
  writeFileSync(join(s.dir, 'config.toml'), '[fold]\nfreshness_secs = 0\n');
  mkdirSync(join(s.dir, 'state'));
  mkdirSync(join(s.dir, 'cfg'));
  env = { TMA_CONFIG: join(s.dir, 'config.toml'), XDG_STATE_HOME: join(s.dir, 'state'), XDG_CONFIG_HOME: join(s.dir, 'cfg') };
});

afterEach(() => s.kill());

const settle = (ms = 300) => new Promise((r) => setTimeout(r, ms));

async function twoAgents(): Promise<{ blocked: StandIn; working: StandIn }> {
  const first = s.start();
  // The working one is first in tmux order: the view must still put the blocked one on top.
  const working = await s.standIn(first, 'claude', 'claude-working.txt');
  const blocked = await s.standIn(s.newPane(), 'claude', 'claude-permission-dialog.txt', { afterKey: { fixture: 'claude-working.txt', delayMs: 0 } });
  return { blocked, working };
}

async function startWatch(t: TuiPane, extra: string[] = []): Promise<string> {
  t.type(tmaLine(env, ['--socket-name', s.name, 'watch', ...extra]));
  t.keys('Enter');
  return t.until((x) => x.includes('BLOCKED (1)') && x.includes('WORKING (1)'), 'both agents on the watch');
}

describe('tma watch, local', () => {
  test('shows both agents, blocked first; a then y sends exactly one key; the row follows the agent to working', async () => {
    const { blocked, working } = await twoAgents();
    const t = tuiPane(s);
    const screen = await startWatch(t);
    const lines = screen.split('\n');
    const bi = lines.findIndex((l) => l.startsWith('BLOCKED'));
    const wi = lines.findIndex((l) => l.startsWith('WORKING'));
    expect(bi).toBeGreaterThan(-1);
    expect(bi).toBeLessThan(wi);
    // The cursor starts on the blocked row (the first one).
    expect(lines[bi + 1]).toMatch(/^> ⚑ blocked/);
    t.keys('a');
    const asked = await t.until((x) => x.includes('y confirms'), 'the confirmation line');
    expect(asked).toMatch(new RegExp(`Approve claude on \\S+ main:1\\.0 \\(${blocked.pane}`));
    expect(blocked.keys()).toBe('');
    t.keys('y');
    // Exactly one key, and the row follows the agent to working within a second, with no keypress.
    await t.until((x) => blocked.keys() !== '' && x.includes('[sent]'), 'the act outcome on its row');
    const sentAt = Date.now();
    await t.until((x) => x.includes('WORKING (2)'), 'the row moved to working', 5000);
    expect(Date.now() - sentAt).toBeLessThan(1500);
    await settle();
    expect(blocked.keys()).toBe('1');
    expect(working.keys()).toBe('');
  });

  test('an agent that changes on its own shows within two seconds, with no keypress', async () => {
    const { working } = await twoAgents();
    const t = tuiPane(s);
    await startWatch(t);
    // Quiet long enough that only a reported move, not a start-up cycle, can explain what follows.
    await settle(2500);
    const at = Date.now();
    await working.paint('claude-permission-dialog.txt');
    await t.until((x) => x.includes('BLOCKED (2)'), 'the second agent blocked on the watch', 8000);
    expect(Date.now() - at).toBeLessThan(2500);
  });

  test('an agent that goes idle during the dwell shows idle once the dwell is over, with no keypress', async () => {
    // A long dwell: the idle screen is held as working well past the look its repaint woke, and
    // nothing on the screen moves when the hold ends (only the clock does).
    writeFileSync(join(s.dir, 'config.toml'), '[fold]\nfreshness_secs = 0\ndwell_secs = 4\n');
    const { working } = await twoAgents();
    const t = tuiPane(s);
    await startWatch(t);
    const at = Date.now();
    await working.paint('claude-idle.txt');
    // Idle after a turn, not yet seen: done.
    await t.until((x) => /✓1 ●0/.test(x), 'the agent done on the watch', 15_000);
    // The dwell (counted from the last working look, before the repaint), then a look within a second.
    expect(Date.now() - at).toBeLessThan(4000 + 2000);
  }, 30_000);

  test('while nothing changes, the watch writes nothing to its terminal', async () => {
    await twoAgents();
    const t = tuiPane(s);
    await startWatch(t);
    await settle(1500);
    // Every byte the watch writes from here on lands in this file.
    const log = join(s.dir, 'watch.out');
    writeFileSync(log, '');
    s.tmux('pipe-pane', '-t', t.pane, `cat >> ${log}`);
    await settle(4500);
    s.tmux('pipe-pane', '-t', t.pane);
    expect(readFileSync(log, 'utf8')).toBe('');
    expect(t.screen()).toContain('<1m');
  });

  test('a on a row that is not blocked sends nothing', async () => {
    const { blocked, working } = await twoAgents();
    const t = tuiPane(s);
    await startWatch(t);
    t.keys('j');
    await t.until((x) => /^> ● working/m.test(x), 'the cursor on the working row');
    t.keys('a');
    const said = await t.until((x) => x.includes('nothing to approve'), 'the refusal note');
    expect(said).not.toContain('y confirms');
    t.keys('y');
    await settle(800);
    expect(working.keys()).toBe('');
    expect(blocked.keys()).toBe('');
  });

  test('d then anything but y cancels and sends nothing', async () => {
    const { blocked } = await twoAgents();
    const t = tuiPane(s);
    await startWatch(t);
    t.keys('d');
    await t.until((x) => x.includes('Deny claude') && x.includes('y confirms'), 'the deny confirmation');
    t.keys('n');
    await t.until((x) => x.includes('deny cancelled'), 'cancelled');
    await settle(800);
    expect(blocked.keys()).toBe('');
  });

  test('q leaves the terminal as it was', async () => {
    await twoAgents();
    const t = tuiPane(s);
    t.type(`stty -g > ${s.dir}/before.tty; clear`);
    t.keys('Enter');
    await t.until((x) => x.trim() === '$', 'a clear prompt');
    const line = tmaLine(env, ['--socket-name', s.name, 'watch']);
    t.type(line);
    const typed = await t.until((x) => x.replace(/\s+/g, '').includes(line.replace(/\s+/g, '').slice(-40)), 'the command line typed');
    t.keys('Enter');
    await t.until((x) => x.includes('BLOCKED (1)') && x.includes('WORKING (1)'), 'both agents on the watch');
    expect(s.tmux('display-message', '-p', '-t', t.pane, '#{alternate_on} #{cursor_flag}').trim()).toBe('1 0');
    t.keys('q');
    const after = await t.until((x) => x.split('\n').filter((l) => l.startsWith('$')).length === 2, 'the shell prompt back');
    // The main screen is as it was (the command line that ran, then a fresh prompt); the alternate
    // screen is off, the cursor shown, and the terminal modes (raw mode off) are as before.
    const trim = (x: string) => x.replace(/\n+$/, '');
    expect(trim(after)).toBe(`${trim(typed)}\n$`);
    expect(s.tmux('display-message', '-p', '-t', t.pane, '#{alternate_on} #{cursor_flag}').trim()).toBe('0 1');
    t.type(`stty -g > ${s.dir}/after.tty; cmp ${s.dir}/before.tty ${s.dir}/after.tty && echo SAME-TTY`);
    t.keys('Enter');
    await t.until((x) => x.includes('SAME-TTY'), 'the terminal modes as they were');
  });

  test('SIGTERM restores the terminal too', async () => {
    await twoAgents();
    const t = tuiPane(s);
    await startWatch(t);
    const pid = s.tmux('display-message', '-p', '-t', t.pane, '#{pane_pid}').trim();
    // The watch is the shell's child: end it as a supervisor would.
    const child = execFileSync('pgrep', ['-P', pid], { encoding: 'utf8' }).trim().split('\n')[0]!;
    process.kill(Number(child), 'SIGTERM');
    await t.until((x) => !x.includes('BLOCKED'), 'the watch gone');
    expect(s.tmux('display-message', '-p', '-t', t.pane, '#{alternate_on} #{cursor_flag}').trim()).toBe('0 1');
  });
});
