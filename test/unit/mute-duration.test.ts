import { describe, expect, test } from 'vitest';
import { DurationError, MUTE_SENTINEL, muteUntil, parseMuteDuration } from '../../collector/act/mute-duration.js';

describe('parseMuteDuration', () => {
  test('units; a bare number is seconds; blanks around are trimmed', () => {
    expect(parseMuteDuration('90')).toEqual({ ms: 90_000, label: '90s' });
    expect(parseMuteDuration('30s').ms).toBe(30_000);
    expect(parseMuteDuration('30m')).toEqual({ ms: 1_800_000, label: '30m' });
    expect(parseMuteDuration('2h').ms).toBe(7_200_000);
    expect(parseMuteDuration(' 1d ').ms).toBe(86_400_000);
  });

  test('the echo names the coarsest unit that states the window exactly', () => {
    expect(parseMuteDuration('1800').label).toBe('30m');
    expect(parseMuteDuration('7200').label).toBe('2h');
    expect(parseMuteDuration('86400').label).toBe('1d');
    expect(parseMuteDuration('120m').label).toBe('2h');
    expect(parseMuteDuration('48h').label).toBe('2d');
    expect(parseMuteDuration('90m').label).toBe('90m');
    expect(parseMuteDuration('3601').label).toBe('3601s');
  });

  test('zero is refused, one is the smallest window', () => {
    expect(() => parseMuteDuration('0')).toThrow(DurationError);
    expect(() => parseMuteDuration('0m')).toThrow(DurationError);
    expect(parseMuteDuration('1').ms).toBe(1000);
  });

  test('junk is refused', () => {
    for (const bad of ['', ' ', 'm', '5x', '1.5h', '-1', '+1', '1 m', '1mm', '1M', '0x10']) {
      expect(() => parseMuteDuration(bad), bad).toThrow(DurationError);
    }
  });

  test('a window past the sentinel saturates there instead of overflowing', () => {
    expect(parseMuteDuration('99999999999999999999999d').ms).toBe(MUTE_SENTINEL);
    // The sentinel is 99999999999.999 s: the last whole second under it, and the first over.
    expect(parseMuteDuration('99999999999s').ms).toBe(99_999_999_999_000);
    expect(parseMuteDuration('100000000000s').ms).toBe(MUTE_SENTINEL);
  });
});

describe('muteUntil', () => {
  test('now + window, capped at the sentinel: just under, at, just over', () => {
    expect(muteUntil(1000, 500)).toBe(1500);
    expect(muteUntil(MUTE_SENTINEL - 501, 500)).toBe(MUTE_SENTINEL - 1);
    expect(muteUntil(MUTE_SENTINEL - 500, 500)).toBe(MUTE_SENTINEL);
    expect(muteUntil(MUTE_SENTINEL - 499, 500)).toBe(MUTE_SENTINEL);
    expect(MUTE_SENTINEL).toBe(99_999_999_999_999);
  });
});
