import { describe, expect, it } from 'vitest';
import { ENGINE_VERSION, compareVersions, parseVersion } from '../../collector/core/version.js';

describe('parseVersion', () => {
  it('reads missing parts as zero', () => {
    expect(parseVersion('1')).toEqual([1, 0, 0]);
    expect(parseVersion('1.2')).toEqual([1, 2, 0]);
    expect(parseVersion('1.2.3')).toEqual([1, 2, 3]);
    expect(parseVersion('0.10.07')).toEqual([0, 10, 7]);
  });

  it.each(['', '1.', '.1', '1..2', '1.2.3.4', 'v1', '1.a', ' 1', '1 ', '-1', '+1', '1.2.3-rc1', '1e3', '0x1', '99999999999999999999'])('refuses %j', (text) => {
    expect(() => parseVersion(text)).toThrow(/invalid version/);
  });
});

describe('compareVersions', () => {
  it('orders numerically part by part', () => {
    expect(compareVersions('0.4.4', '0.4.4')).toBe(0);
    expect(compareVersions('0.4.3', '0.4.4')).toBe(-1);
    expect(compareVersions('0.4.5', '0.4.4')).toBe(1);
    expect(compareVersions('0.10', '0.9.9')).toBe(1);
    expect(compareVersions('1', '0.99.99')).toBe(1);
  });

  it('treats absent parts as zero', () => {
    expect(compareVersions('0.4', '0.4.0')).toBe(0);
    expect(compareVersions('1', '1.0.0')).toBe(0);
    expect(compareVersions('0.4', '0.4.1')).toBe(-1);
  });

  it('throws on junk on either side', () => {
    expect(() => compareVersions('x', '1')).toThrow();
    expect(() => compareVersions('1', 'x')).toThrow();
  });

  it('the engine version is the contract we match', () => {
    expect(ENGINE_VERSION).toBe('0.4.4');
  });
});
