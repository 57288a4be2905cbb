import { describe, expect, it } from 'vitest';
import { isShellOnly, normalizeComm, subtree, type ProcEntry } from '../../collector/core/proc.js';

function proc(pid: number, ppid: number, comm: string, pgid = pid, tpgid: number | null = null): ProcEntry {
  return { pid, ppid, pgid, tpgid, comm };
}

describe('normalizeComm', () => {
  it.each([
    ['claude', 'claude'],
    ['.claude-wrapped', 'claude'],
    ['.opencode-wrapp', 'opencode'],
    ['.codex-wrappe', 'codex'],
    ['.pi-w', 'pi'],
    ['.x-', 'x'],
    ['.-wrapped', '.-wrapped'],
    ['.-', '.-'],
    ['-bash', '-bash'],
    ['/usr/bin/node --x', 'node'],
    ['/nix/store/abc-claude/bin/.claude-wrapped --resume', 'claude'],
    ['  node  ', 'node'],
    ['.hidden', '.hidden'],
    ['claude-wrapped', 'claude-wrapped'],
    ['.x-wrappedx', '.x-wrappedx'],
    ['', ''],
  ])('%j -> %j', (input, expected) => {
    expect(normalizeComm(input)).toBe(expected);
  });
});

describe('subtree', () => {
  const table = [
    proc(1, 0, 'init'),
    proc(100, 1, 'zsh'),
    proc(200, 100, 'node'),
    proc(201, 200, 'rg'),
    proc(300, 1, 'unrelated'),
    proc(301, 300, 'child-of-unrelated'),
  ];

  it('holds the root and every descendant, nothing else', () => {
    expect(
      subtree(table, 100)
        .map((p) => p.pid)
        .sort(),
    ).toEqual([100, 200, 201]);
  });

  it('is empty when the root is gone and nothing descends from it', () => {
    expect(subtree(table, 999)).toEqual([]);
  });

  it('terminates on ppid cycles and self-parents, listing each pid once', () => {
    const cyclic = [proc(0, 0, 'kernel'), proc(5, 6, 'a'), proc(6, 5, 'b'), proc(7, 6, 'c')];
    expect(
      subtree(cyclic, 5)
        .map((p) => p.pid)
        .sort(),
    ).toEqual([5, 6, 7]);
    expect(subtree(cyclic, 0).map((p) => p.pid)).toEqual([0]);
  });
});

describe('isShellOnly', () => {
  it('counts an empty subtree as shell-only', () => {
    expect(isShellOnly([])).toBe(true);
  });

  it('accepts login shells with their leading dash and wrapped shells', () => {
    expect(isShellOnly([proc(1, 0, '-bash'), proc(2, 1, 'zsh'), proc(3, 2, '/bin/.fish-wrapped')])).toBe(true);
    expect(isShellOnly([proc(1, 0, 'login'), proc(2, 1, '-zsh')])).toBe(true);
  });

  it('is false as soon as one non-shell is present', () => {
    expect(isShellOnly([proc(1, 0, '-bash'), proc(2, 1, 'node')])).toBe(false);
    expect(isShellOnly([proc(1, 0, 'bashful')])).toBe(false);
  });

  it('strips only one leading dash', () => {
    expect(isShellOnly([proc(1, 0, '--bash')])).toBe(false);
  });
});
