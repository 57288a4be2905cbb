// The log level a long-running verb runs at, and how a record's fields read on a terminal.

import { describe, expect, it } from 'vitest';
import { pickLogLevel } from '../../shared/log-level.js';
import { fieldsText } from '../../shared/log.js';

describe('pickLogLevel', () => {
  it('takes the flag over TMA_LOG_LEVEL, and info when neither says', () => {
    expect(pickLogLevel(undefined, {})).toBe('info');
    expect(pickLogLevel(undefined, { TMA_LOG_LEVEL: '' })).toBe('info');
    expect(pickLogLevel(undefined, { TMA_LOG_LEVEL: 'warn' })).toBe('warn');
    expect(pickLogLevel('debug', { TMA_LOG_LEVEL: 'warn' })).toBe('debug');
    expect(pickLogLevel('ERROR', {})).toBe('error');
    for (const l of ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']) expect(pickLogLevel(l, {})).toBe(l);
  });

  it('refuses a value that is not a level, naming where it came from', () => {
    expect(() => pickLogLevel('verbose', {})).toThrow(/^--log-level must be one of trace\|debug\|info\|warn\|error\|fatal\|silent, not "verbose"$/);
    expect(() => pickLogLevel(undefined, { TMA_LOG_LEVEL: '10' })).toThrow(/^TMA_LOG_LEVEL must be one of .*, not "10"$/);
    // A bad environment value does not matter when the flag decides.
    expect(pickLogLevel('info', { TMA_LOG_LEVEL: 'loud' })).toBe('info');
  });
});

describe('fieldsText', () => {
  it('writes key=value, quoting values with spaces, quotes or equals signs, and JSON for the rest', () => {
    expect(fieldsText({ host: 'build1', via: 'ws' })).toBe('host=build1 via=ws');
    expect(fieldsText({ reason: 'closed (1006)', n: 3, ok: true, none: null, gone: undefined })).toBe('reason="closed (1006)" n=3 ok=true none=null');
    expect(fieldsText({ a: 'x=y', b: 'say "hi"', c: '' })).toBe('a="x=y" b="say \\"hi\\"" c=""');
    expect(fieldsText({ resume_from: { seq: 4 } })).toBe('resume_from="{\\"seq\\":4}"');
  });
});
