import { describe, expect, test } from 'vitest';
import { baseEnv, execEnv } from '../../collector/act/exec-env.js';
import { exitCodeOf } from '../../collector/act/exec.js';
import type { PaneFacts } from '../../collector/act/facts.js';

const facts: PaneFacts = {
  pane: '%4',
  locator: 'w:1.0',
  agent: 'claude',
  state: 'idle',
  detail: null,
  contextPct: 80,
  session: 'sess_1',
  cwd: '/repo',
  pid: 99,
  title: '$(rm -rf ~)',
  stamp: null,
  episodeMs: 5,
  stampedAt: 6,
  permissionRequest: null,
  apiEndpoint: null,
  lock: '',
};

describe('execEnv', () => {
  test('the pane context, verbatim (a hostile title stays data), empty when absent', () => {
    expect(execEnv('note', { ...facts, pid: 0 }, [])).toEqual({
      TMA_PANE: '%4',
      TMA_AGENT: 'claude',
      TMA_STATE: 'idle',
      TMA_DETAIL: '',
      TMA_SESSION_ID: 'sess_1',
      TMA_CWD: '/repo',
      TMA_PID: '',
      TMA_LOCATOR: 'w:1.0',
      TMA_TITLE: '$(rm -rf ~)',
      TMA_ACTION: 'note',
    });
  });

  test('no TMA_ARG* without args; with them the first, the count and each by position', () => {
    expect(Object.keys(execEnv('n', facts, [])).filter((k) => k.startsWith('TMA_ARG'))).toEqual([]);
    expect(execEnv('n', facts, ['a'])).toMatchObject({ TMA_ARG: 'a', TMA_ARG_COUNT: '1', TMA_ARG_1: 'a' });
    const two = execEnv('n', facts, ['a b', '']);
    expect(two).toMatchObject({ TMA_ARG: 'a b', TMA_ARG_COUNT: '2', TMA_ARG_1: 'a b', TMA_ARG_2: '' });
    expect('TMA_ARG_3' in two).toBe(false);
  });

  test('inherited TMA_ARG* never leak into a call without args', () => {
    expect(baseEnv({ PATH: '/bin', TMA_ARG: 'old', TMA_ARG_1: 'old', TMA_CONFIG: '/c', GONE: undefined })).toEqual({ PATH: '/bin', TMA_CONFIG: '/c' });
  });
});

describe('exitCodeOf', () => {
  test('own code, else 128 + signal number', () => {
    expect(exitCodeOf(0, null)).toBe(0);
    expect(exitCodeOf(3, null)).toBe(3);
    expect(exitCodeOf(null, 'SIGKILL')).toBe(137);
    expect(exitCodeOf(null, 'SIGTERM')).toBe(143);
  });
});
