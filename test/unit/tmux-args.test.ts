import { describe, expect, it } from 'vitest';
import { TargetConflictError, globalArgs, resolveTarget, targetFlags, tmuxBin } from '../../collector/tmux/target.js';
import { TmuxError, classifyStderr, errorFromStderr, isPaneGone, isProtocolMismatch, isServerGone } from '../../collector/tmux/errors.js';
import { chainArgv, controlLine, escapeArgvArg, quoteCommandArg, splitChain } from '../../collector/tmux/command-syntax.js';
import { ControlParser, LineSplitter, blockText, type ControlMessage } from '../../collector/tmux/control-parser.js';
import { splitOnMarker } from '../../collector/tmux/spawn-runner.js';
import { parseProcStat, parsePsTable, readProcDir } from '../../collector/tmux/proc-table.js';

describe('resolveTarget', () => {
  const env = { TMA_SOCKET_PATH: '/tmp/env.sock' };
  it('prefers --socket-name over the environment', () => {
    expect(resolveTarget({ socketName: 'work', env })).toEqual({ kind: 'name', name: 'work' });
  });
  it('prefers --socket-path over the environment', () => {
    expect(resolveTarget({ socketPath: '/tmp/flag.sock', env })).toEqual({ kind: 'path', path: '/tmp/flag.sock' });
  });
  it('uses TMA_SOCKET_PATH only when no flag is given', () => {
    expect(resolveTarget({ env })).toEqual({ kind: 'path', path: '/tmp/env.sock' });
  });
  it('falls back to the default server', () => {
    expect(resolveTarget({ env: {} })).toEqual({ kind: 'default' });
    expect(resolveTarget({ env: { TMA_SOCKET_PATH: '' } })).toEqual({ kind: 'default' });
  });
  it('treats empty flags as absent', () => {
    expect(resolveTarget({ socketName: '', socketPath: '', env })).toEqual({ kind: 'path', path: '/tmp/env.sock' });
  });
  it('rejects both flags together as a usage error', () => {
    const call = (): unknown => resolveTarget({ socketName: 'a', socketPath: '/b', env: {} });
    expect(call).toThrow(TargetConflictError);
    try {
      call();
    } catch (e) {
      expect((e as TargetConflictError).exitCode).toBe(2);
    }
  });
});

describe('tmuxBin', () => {
  it('takes TMA_TMUX_BIN over the config, the config over the default', () => {
    expect(tmuxBin({ TMA_TMUX_BIN: '/opt/tmux' }, 'cfg-tmux')).toBe('/opt/tmux');
    expect(tmuxBin({}, 'cfg-tmux')).toBe('cfg-tmux');
    expect(tmuxBin({ TMA_TMUX_BIN: '' }, 'cfg-tmux')).toBe('cfg-tmux');
    expect(tmuxBin({}, null)).toBe('tmux');
    expect(tmuxBin({})).toBe('tmux');
  });
});

describe('globalArgs', () => {
  it('always passes -u, then the server flag', () => {
    expect(globalArgs({ kind: 'name', name: 'x' })).toEqual(['-u', '-L', 'x']);
    expect(globalArgs({ kind: 'path', path: '/s p/sock' })).toEqual(['-u', '-S', '/s p/sock']);
    expect(globalArgs({ kind: 'default' })).toEqual(['-u']);
  });
  it('forwards the same server as tma flags', () => {
    expect(targetFlags({ kind: 'name', name: 'x' })).toEqual(['--socket-name', 'x']);
    expect(targetFlags({ kind: 'path', path: '/p' })).toEqual(['--socket-path', '/p']);
    expect(targetFlags({ kind: 'default' })).toEqual([]);
  });
});

describe('error classification', () => {
  it.each([
    'no server running on /tmp/tmux-0/default',
    'error connecting to /tmp/x/sock (No such file or directory)',
    'error connecting to /tmp/tmux-0/a (Connection refused)',
    'failed to connect to server',
    'server exited unexpectedly',
  ])('%s is server-gone', (stderr) => {
    expect(isServerGone(stderr)).toBe(true);
    expect(classifyStderr(stderr)).toBe('server-gone');
    expect(errorFromStderr(`${stderr}\n`).kind).toBe('server-gone');
  });
  it.each(["can't find pane: %9", 'unknown command: nope', 'no sessions', 'parse error: syntax error'])('%s is a plain failure', (stderr) => {
    expect(classifyStderr(stderr)).toBe('failed');
    const e = errorFromStderr(stderr);
    expect(e).toBeInstanceOf(TmuxError);
    expect(e.stderr).toBe(stderr);
  });
  it('recognises a vanished pane', () => {
    expect(isPaneGone("can't find pane: %12")).toBe(true);
    expect(isPaneGone('no such pane')).toBe(true);
    expect(isPaneGone('pane not found')).toBe(true);
    expect(isPaneGone("can't find session: x")).toBe(false);
  });
  it('recognises a client/server version mismatch', () => {
    expect(isProtocolMismatch('protocol version mismatch (client 8, server 7)')).toBe(true);
    expect(isProtocolMismatch('no server running on /x')).toBe(false);
  });
});

describe('argv chains', () => {
  it('splits on bare ; tokens only', () => {
    expect(splitChain(['a', '1', ';', 'b', 'x;y', ';', ';', 'c', ';'])).toEqual([['a', '1'], ['b', 'x;y'], ['c']]);
    expect(splitChain([';'])).toEqual([]);
  });
  it('keeps a trailing ; of a value literal', () => {
    expect(escapeArgvArg('a;')).toBe('a\\;');
    expect(escapeArgvArg(';')).toBe('\\;');
    expect(escapeArgvArg('a\\;')).toBe('a\\\\;');
    expect(escapeArgvArg('a;b')).toBe('a;b');
  });
  it('joins commands with bare ; tokens', () => {
    expect(chainArgv([['set', 'v;'], ['show']])).toEqual(['set', 'v\\;', ';', 'show']);
  });
});

// A reader of tmux's command syntax restricted to what the quoting emits: single-quoted runs
// (literal) and double-quoted runs holding only octal escapes, joined into one word.
function readWord(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const q = text[i];
    const end = text.indexOf(q ?? '', i + 1);
    if ((q !== "'" && q !== '"') || end < 0) throw new Error(`unquoted text at ${i}: ${text}`);
    const body = text.slice(i + 1, end);
    if (q === "'") out += body;
    else {
      const m = /^\\([0-7]{3})$/.exec(body);
      if (!m?.[1]) throw new Error(`unexpected double-quoted run ${body}`);
      out += String.fromCodePoint(parseInt(m[1], 8));
    }
    i = end + 1;
  }
  return out;
}

describe('control-mode quoting', () => {
  const tricky = [
    'plain',
    'two words',
    '',
    "it's",
    "''",
    '"double"',
    '#{?#{==:#{@agent_source},hook},#{@agent_state},working}',
    'a;b',
    ';',
    'x ; y',
    'line1\nline2\r\t',
    '\u001f',
    '$HOME',
    '~/path',
    '\\;',
    'ünïcødé ✓ 漢字 🙂',
    '{ braces }',
    '# not a comment',
  ];
  it.each(tricky)('round-trips %j', (value) => {
    const q = quoteCommandArg(value);
    expect(readWord(q)).toBe(value);
    // Nothing may end the control-mode line early.
    expect(q).not.toMatch(/[\n\r]/);
  });
  it('keeps text tmux would expand inside single quotes', () => {
    // readWord above already refuses any double-quoted run that is not one octal escape.
    expect(quoteCommandArg('$HOME')).toBe("'$HOME'");
    expect(quoteCommandArg('~/x')).toBe("'~/x'");
    expect(quoteCommandArg("a'b")).toBe(`'a'"\\047"'b'`);
  });
  it('separates the commands of a chain with a bare ;', () => {
    expect(controlLine([['set', '-p', 'a;b'], ['show']])).toBe("'set' '-p' 'a;b' ; 'show'");
  });
});

describe('ControlParser', () => {
  function feed(lines: string[]): ControlMessage[] {
    const p = new ControlParser();
    return lines.map((l) => p.push(l)).filter((m): m is ControlMessage => m !== null);
  }
  it('closes a block only on the matching time and number', () => {
    const msgs = feed(['%begin 100 7 1', '%end 1 2 3', '%end 100 8 1', '%error 99 7 1', '%begin 100 9 1', '%end 100 7 1']);
    expect(msgs).toHaveLength(1);
    const b = msgs[0];
    expect(b?.type).toBe('block');
    if (b?.type !== 'block') return;
    expect(b.lines).toEqual(['%end 1 2 3', '%end 100 8 1', '%error 99 7 1', '%begin 100 9 1']);
    expect(b.error).toBe(false);
    expect(b.flags).toBe(1);
    expect(blockText(b)).toBe('%end 1 2 3\n%end 100 8 1\n%error 99 7 1\n%begin 100 9 1\n');
  });
  it('marks %error blocks and reads notifications between blocks', () => {
    const msgs = feed(['%begin 5 6 0', "can't find pane: %1", '%error 5 6 0', '%window-add @3', '%exit', '%output %1 hi there']);
    expect(msgs).toEqual([
      { type: 'block', time: '5', number: '6', flags: 0, error: true, lines: ["can't find pane: %1"] },
      { type: 'notification', name: 'window-add', args: '@3' },
      { type: 'notification', name: 'exit', args: '' },
      { type: 'notification', name: 'output', args: '%1 hi there' },
    ]);
  });
  it('keeps empty output lines, and an empty block has no text', () => {
    const msgs = feed(['%begin 1 1 1', '', '', '%end 1 1 1', '%begin 1 2 1', '%end 1 2 1']);
    const [a, b] = msgs;
    expect(a?.type === 'block' && blockText(a)).toBe('\n\n');
    expect(b?.type === 'block' && blockText(b)).toBe('');
  });
  it('splits chunks into lines across chunk borders', () => {
    const s = new LineSplitter();
    expect(s.push('%beg')).toEqual([]);
    expect(s.push('in 1 1 1\nab')).toEqual(['%begin 1 1 1']);
    expect(s.push('c\n\n')).toEqual(['abc', '']);
  });
});

describe('splitOnMarker', () => {
  const m = 'MARK';
  it('cuts at marker lines only', () => {
    expect(splitOnMarker('a\nMARK\nb\nc\nMARK\n', m, 3)).toEqual(['a\n', 'b\nc\n', '']);
    expect(splitOnMarker('MARK\nMARK\n', m, 3)).toEqual(['', '', '']);
    expect(splitOnMarker('xMARK\nMARK\ny\n', m, 2)).toEqual(['xMARK\n', 'y\n']);
  });
  it('fails when the marker count is off', () => {
    expect(() => splitOnMarker('a\n', m, 2)).toThrow(TmuxError);
  });
});

describe('parsePsTable', () => {
  it('skips the header, joins multi-word comm, maps tpgid <= 0 and junk to null', () => {
    const text = [
      '    PID    PPID    PGID   TPGID COMMAND',
      '      1       0       1      -1 init',
      '    200       1     200     250 tmux: server',
      '    250     200     250     250 my  agent   x',
      '    300     250     250       0 zero',
      '    301     250     250       1 one',
      '    302     250     250     abc junk',
      '    400     250     250     250',
      '  abc       1       1       1 bad',
      '',
    ].join('\n');
    expect(parsePsTable(text)).toEqual([
      { pid: 1, ppid: 0, pgid: 1, tpgid: null, comm: 'init' },
      { pid: 200, ppid: 1, pgid: 200, tpgid: 250, comm: 'tmux: server' },
      { pid: 250, ppid: 200, pgid: 250, tpgid: 250, comm: 'my agent x' },
      { pid: 300, ppid: 250, pgid: 250, tpgid: null, comm: 'zero' },
      { pid: 301, ppid: 250, pgid: 250, tpgid: 1, comm: 'one' },
      { pid: 302, ppid: 250, pgid: 250, tpgid: null, comm: 'junk' },
    ]);
  });
});

describe('parseProcStat', () => {
  it('reads comm with spaces and parentheses up to the last )', () => {
    const line = '4242 (we (ird) name) S 100 4242 4242 34816 4300 4194304 1 2 3';
    expect(parseProcStat(line)).toEqual({ pid: 4242, ppid: 100, pgid: 4242, tpgid: 4300, comm: 'we (ird) name' });
  });
  it('maps tpgid -1 and 0 to null, keeps 1', () => {
    expect(parseProcStat('7 (a) S 1 7 7 0 -1 0')?.tpgid).toBeNull();
    expect(parseProcStat('7 (a) S 1 7 7 0 0 0')?.tpgid).toBeNull();
    expect(parseProcStat('7 (a) S 1 7 7 0 1 0')?.tpgid).toBe(1);
  });
  it('rejects malformed lines', () => {
    expect(parseProcStat('')).toBeNull();
    expect(parseProcStat('7 a S 1 7 7 0 1')).toBeNull();
    expect(parseProcStat('x (a) S 1 7 7 0 1')).toBeNull();
    expect(parseProcStat('7 (a) S')).toBeNull();
    expect(parseProcStat('7 () S 1 7 7 0 1')).toBeNull();
  });
  it('reports a directory that is not procfs as unreadable', () => {
    expect(readProcDir('/nonexistent-proc-root')).toBeNull();
  });
});
