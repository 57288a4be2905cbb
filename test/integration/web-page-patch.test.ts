// The page patches only what changed, in a real browser (Debian's chromium via playwright-core):
// a hub with 200 rows from a fake collector over a real WebSocket, the page open on its stream, and
// a MutationObserver counting which rows' elements the page touched when one row changed. A row
// whose text changed is patched in that cell; one that changed state moves once in its list; every
// other row is left alone (ages excepted: they move on every second by design).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { ProtocolRow } from '../../shared/row.js';
import { EPOCH_A, FakeCollector, protoRow, until } from '../support/hub-fake-collector.js';
import { launchPageBrowser } from '../support/page-browser.js';
import { TOKENS, startTestHub, type TestHub } from '../support/hub-harness.js';

const T0 = Date.now() - 4 * 60_000;
const ROWS = 200;

let tmp: string;
let browser: Browser;
let hub: TestHub | null = null;
let context: BrowserContext | null = null;
let fc: FakeCollector | null = null;
let beat: NodeJS.Timeout | null = null;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tma-web-patch-'));
  browser = await launchPageBrowser(tmp);
});
afterAll(async () => {
  await browser?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});
afterEach(async () => {
  await context?.close();
  context = null;
  if (beat) clearInterval(beat);
  beat = null;
  fc?.ws.terminate();
  fc = null;
  await hub?.close();
  hub = null;
});

const row = (i: number, over: Partial<ProtocolRow> = {}): ProtocolRow =>
  protoRow({
    host: 'build1',
    pane: `%${i}`,
    state: i % 4 === 0 ? 'blocked' : 'working',
    detail: i % 4 === 0 ? 'permission' : null,
    locator: `s${i % 5}:${i}.0`,
    since: T0,
    since_ms: T0,
    episode_ms: T0,
    stamped_at_ms: T0,
    repo: 'tma',
    branch: 'main',
    ...over,
  });

/** In the page: record which rows (by list and pane) DOM writes touch, and row elements added or removed. */
const WATCH = `{
  globalThis.__touched = new Set();
  globalThis.__moves = 0;
  globalThis.__obs = new MutationObserver((records) => {
    for (const m of records) {
      const node = m.target instanceof Element ? m.target : m.target.parentElement;
      if (node?.closest('.c-age')) continue; // ages move on every second, by design
      const r = node?.closest('.agent-row');
      if (r) globalThis.__touched.add((r.closest('#needs-list') ? 'needs ' : 'fleet ') + r.getAttribute('data-pane'));
      for (const n of [...m.addedNodes, ...m.removedNodes]) if (n instanceof Element && n.classList.contains('agent-row')) globalThis.__moves++;
    }
  });
  for (const id of ['hosts', 'needs-list'])
    globalThis.__obs.observe(document.getElementById(id), { subtree: true, childList: true, characterData: true, attributes: true });
}`;
/** What was recorded since the last call (MutationObserver callbacks run before this task). */
const TAKE = `new Promise((resolve) => setTimeout(() => {
  const out = { touched: [...globalThis.__touched].sort(), moves: globalThis.__moves };
  globalThis.__touched.clear();
  globalThis.__moves = 0;
  resolve(out);
}, 0))`;

async function watch(page: Page): Promise<() => Promise<{ touched: string[]; moves: number }>> {
  await page.evaluate(WATCH);
  return () => page.evaluate<{ touched: string[]; moves: number }>(TAKE);
}

it('touches only the rows that changed, and moves a row that changed place once', async () => {
  hub = await startTestHub({ heartbeatMs: 1000 });
  fc = await FakeCollector.connect(hub.url, TOKENS.build1);
  const link = fc;
  beat = setInterval(() => link.heartbeat(), 250);
  fc.send({ type: 'hello', protocol: 1, host: 'build1', collector_version: '0.1.0-test', epoch: EPOCH_A, actions_allowed: [] });
  await fc.next((f) => f.type === 'welcome');
  fc.snapshot(
    1,
    Array.from({ length: ROWS }, (_, i) => row(i)),
  );
  await until(() => (hub!.store.rows().length === ROWS ? true : undefined));

  context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  const page = await context.newPage();
  await page.goto(`${hub.url}/#token=${TOKENS.viewer}`);
  await expect.poll(() => page.locator('#hosts .agent-row').count(), { timeout: 10_000 }).toBe(ROWS);
  await expect.poll(() => page.locator('#needs-list .agent-row').count()).toBe(ROWS / 4);
  const taken = await watch(page);
  const repoOf = (pane: string) => page.locator(`#hosts .agent-row[data-pane="${pane}"] .c-repo`).textContent();

  // One row's branch changes: that row's repo cell, in its one list, is all that is written.
  fc.delta(2, [row(7, { branch: 'fix' })]);
  await expect.poll(() => repoOf('%7')).toBe('tma @ fix');
  await new Promise((r) => setTimeout(r, 300));
  expect(await taken()).toEqual({ touched: ['fleet %7'], moves: 0 });

  // A blocked row is answered: it leaves "needs you" and moves among its server's rows, once.
  fc.delta(3, [row(8, { state: 'working', detail: null })]);
  await expect.poll(() => page.locator('#hosts .agent-row[data-pane="%8"]').getAttribute('data-class')).toBe('working');
  await new Promise((r) => setTimeout(r, 300));
  const moved = await taken();
  expect(moved.touched.filter((t) => !t.endsWith(' %8'))).toEqual([]);
  // Out of "needs you" (one removal), and out of and back into its place in the host's list.
  expect(moved.moves).toBeLessThanOrEqual(3);
  expect(await page.locator('#needs-list .agent-row').count()).toBe(ROWS / 4 - 1);

  // A second or two of ticks with nothing new: no row is written at all.
  await new Promise((r) => setTimeout(r, 2200));
  expect(await taken()).toEqual({ touched: [], moves: 0 });
});
