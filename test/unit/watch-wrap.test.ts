// A long error in the watch is wrapped over several lines, never cut at the terminal's width.

import { expect, test } from 'vitest';
import { initialState, withRows } from '../../cli/watch/model.js';
import { render, wrap } from '../../cli/watch/render.js';

const ERR =
  "approve claude on laptop main:0.0: error: hub https://127.0.0.1:43949 not trusted: self-signed certificate; pass --hub-ca FILE (the hub's certificate, e.g. from tma hub tls) or --hub-fingerprint SHA256";

test('wrap breaks at spaces within the width and keeps every word', () => {
  const lines = wrap(ERR, 80);
  expect(lines.length).toBeGreaterThan(1);
  for (const l of lines) expect([...l].length).toBeLessThanOrEqual(80);
  expect(lines.join(' ')).toBe(ERR);
  expect(wrap('x'.repeat(30), 10, 2)).toEqual(['x'.repeat(10), `${'x'.repeat(9)}…`]);
});

test('a notice and a hub trouble line longer than the terminal are shown whole', () => {
  const trouble = new Map([['(hub)', `the hub stream broke: ${ERR}; retrying`]]);
  const s = { ...withRows(initialState('watch'), [], trouble), notice: ERR };
  const frame = render(s, { cols: 120, rows: 30, now: 0, source: 'fleet at https://h', table: true, hosts: true, preview: null, previewNote: null });
  for (const l of frame) expect([...l.replace(/\x1b\[[0-9;]*m/g, '')].length).toBeLessThanOrEqual(120);
  const text = frame.map((l) => l.replace(/\x1b\[[0-9;]*m/g, '')).join(' ');
  expect(text.replace(/\s+/g, ' ')).toContain(ERR);
  expect(text).toContain('--hub-fingerprint SHA256; retrying');
});
