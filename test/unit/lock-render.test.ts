import { describe, expect, test } from 'vitest';
import { LOCK_KEY, renderLockAcquire, renderLockRead, renderLockRelease, renderLockRewrite } from '../../collector/core/stamp-render.js';

const N = '0123456789abcdef0123456789abcdef';
const V = `1790000035000:${N}:4242:approve`;

describe('lock argv', () => {
  test('acquire writes the value only when the option is empty or its leading digits are below now', () => {
    expect(renderLockAcquire('%3', V, 1_790_000_000_000)).toEqual([
      'set-option',
      '-p',
      '-F',
      '-t',
      '%3',
      '@agent_action',
      `#{?#{||:#{==:#{@agent_action},},#{e|<:#{s/[^0-9].*//:@agent_action},1790000000000}},${V},#{@agent_action}}`,
    ]);
  });

  test('a fractional clock is written as whole ms', () => {
    expect(renderLockAcquire('%3', V, 1000.7)[6]).toContain(',1000}},');
  });

  test('read-back reads the option of that pane', () => {
    expect(renderLockRead('%3')).toEqual(['display-message', '-p', '-t', '%3', '#{@agent_action}']);
  });

  test('release empties the option only when it carries the nonce', () => {
    expect(renderLockRelease('%3', N)).toEqual(['set-option', '-p', '-F', '-t', '%3', '@agent_action', `#{?#{m:*:${N}:*,#{@agent_action}},,#{@agent_action}}`]);
  });

  test('rewrite (supervisor hand-over) is nonce-conditional too', () => {
    expect(renderLockRewrite('%3', N, V)).toEqual([
      'set-option',
      '-p',
      '-F',
      '-t',
      '%3',
      '@agent_action',
      `#{?#{m:*:${N}:*,#{@agent_action}},${V},#{@agent_action}}`,
    ]);
  });

  test('a nonce that is not 32 hex digits is refused: it would widen the match', () => {
    for (const bad of ['*', N.slice(1), `${N}0`, N.toUpperCase(), `${N.slice(2)}*:`]) {
      expect(() => renderLockRelease('%3', bad)).toThrow();
      expect(() => renderLockRewrite('%3', bad, V)).toThrow();
    }
  });

  test('format-special bytes in a value are escaped, never interpreted', () => {
    expect(renderLockAcquire('%3', '1:a,b}#c', 5)[6]).toContain(',1:a#,b#}##c,');
    expect(LOCK_KEY).toBe('@agent_action');
  });
});
