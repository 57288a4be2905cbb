// `[remote] share_prompt` is read once per collector and handed to both the notifier (fleet
// notification events) and the publisher (rows): a hub's own collector shares by default in both.

import { describe, expect, it } from 'vitest';
import { sharesPrompts } from '../../cli/collector-assembly.js';

const remote = (sharePrompt: boolean | null) => ({ remote: { allowActions: null, allowExec: false, sharePrompt } });

describe('share_prompt', () => {
  it('unset: the collector default decides (a hub\'s own collector shares, any other does not)', () => {
    expect(sharesPrompts(remote(null), true)).toBe(true);
    expect(sharesPrompts(remote(null), false)).toBe(false);
  });
  it('set: the setting wins over the default, either way', () => {
    expect(sharesPrompts(remote(false), true)).toBe(false);
    expect(sharesPrompts(remote(true), false)).toBe(true);
  });
});
