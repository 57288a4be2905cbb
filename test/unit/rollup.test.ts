import { describe, expect, it } from 'vitest';
import { summaryOf } from '../../collector/core/rollup.js';

describe('summaryOf', () => {
  it('is empty when the scope has no agent', () => {
    expect(summaryOf([])).toBe('');
  });

  it('counts in the fixed order blocked working idle unknown, whatever the input order', () => {
    expect(summaryOf(['unknown', 'idle', 'working', 'blocked', 'working'])).toBe('blocked:1 working:2 idle:1 unknown:1');
  });

  it('leaves zero counts out', () => {
    expect(summaryOf(['working', 'blocked', 'working'])).toBe('blocked:1 working:2');
    expect(summaryOf(['idle'])).toBe('idle:1');
    expect(summaryOf(['unknown', 'unknown', 'unknown'])).toBe('unknown:3');
  });
});
