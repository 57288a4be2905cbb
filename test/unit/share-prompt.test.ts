// `[remote] share_prompt` is read once per collector and handed to both the notifier (fleet
// notification events) and the publisher (rows). Issue 21: what a prompt asks travels to the hub
// by default, on every collector; only `false` keeps it on the host.

import { describe, expect, it } from 'vitest';
import { sharesPrompts } from '../../cli/collector-assembly.js';

const remote = (sharePrompt: boolean | null) => ({ remote: { allowActions: null, allowExec: false, sharePrompt } });

describe('share_prompt', () => {
  it('unset: shared', () => {
    expect(sharesPrompts(remote(null))).toBe(true);
  });
  it('set: the setting decides, either way', () => {
    expect(sharesPrompts(remote(false))).toBe(false);
    expect(sharesPrompts(remote(true))).toBe(true);
  });
});
