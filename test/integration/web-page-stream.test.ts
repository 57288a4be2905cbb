// The page under a flood, in a real browser (Debian's chromium driven by playwright-core): a hub
// with a small send backlog limit, a fake collector flooding it with row changes over a real
// WebSocket, and a page whose main thread stops taking the stream (held in the debugger) while the
// flood goes on. The hub must pause that reader rather than buffer for it, and once the page reads
// again hand it a fresh document, after which the page is the hub's fleet again, order included.
// And a page too slow for the flood (its CPU throttled) applies every line but redraws once per
// frame, not once per line. And a page whose token a hub reload removed says so and stops asking.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolRow } from '../../shared/row.js';
import { EPOCH_A, FakeCollector, protoRow, until } from '../support/hub-fake-collector.js';
import { launchPageBrowser } from '../support/page-browser.js';
import { TOKENS, startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';

const T0 = Date.now() - 4 * 60_000;
/** Rows on the flooded host: enough that a few hundred milliseconds of changes fill the backlog. */
const ROWS = 300;
/** The hub's send backlog limit for this test: small, so loopback and browser buffers fill fast. */
const BACKLOG = 64 * 1024;

let tmp: string;
let browser: Browser;
let hub: TestHub | null = null;
let context: BrowserContext | null = null;
let fc: FakeCollector | null = null;
let beat: NodeJS.Timeout | null = null;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tma-web-behind-'));
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

/** Long enough that each changes line weighs something, short of any limit on row text. */
const SUMMARY = 'x'.repeat(160);
const STATES = ['working', 'blocked', 'idle'] as const;

function floodRow(i: number, round: number, over: Partial<ProtocolRow> = {}): ProtocolRow {
  const state = STATES[(i + round) % STATES.length]!;
  return protoRow({
    host: 'build1',
    pane: `%${i}`,
    state,
    detail: state === 'blocked' ? 'permission' : null,
    locator: `s${i % 7}:${i}.0`,
    since: T0 + round,
    since_ms: T0 + round,
    episode_ms: T0 + round,
    stamped_at_ms: T0 + round,
    pending_summary: `${round} ${SUMMARY}`,
    ...over,
  });
}

/** Every row the page shows, in page order, against the hub's document in fleet order. */
const shown = (page: Page) =>
  page
    .locator('#hosts .agent-row')
    .evaluateAll((rs) => rs.map((r) => `${r.getAttribute('data-host')}/${r.getAttribute('data-pane')}/${r.getAttribute('data-class')}`));
async function hubRows(): Promise<string[]> {
  const doc = (await (await hub!.get('/v1/agents')).json()) as { agents: { host: string; pane: string; state: string; attention: boolean }[] };
  const cls = (a: { state: string; attention: boolean }) => (a.state === 'idle' && a.attention ? 'done' : a.state);
  return doc.agents.map((a) => `${a.host}/${a.pane}/${cls(a)}`);
}

const heapBytes = async (cdp: CDPSession) => {
  await cdp.send('HeapProfiler.collectGarbage');
  const { metrics } = await cdp.send('Performance.getMetrics');
  return metrics.find((m) => m.name === 'JSHeapUsedSize')!.value;
};

const logged = (msg: string) => hub!.logLines.filter((l) => l.includes(`"msg":"${msg}"`)).length;

/** Count the page's redraws (FleetView.render) and applied lines (FleetMirror.apply) as served. */
async function countCalls(page: Page): Promise<() => Promise<{ renders: number; lines: number }>> {
  const wrap = (cls: string, method: string, counter: string) =>
    `\n{ const f = ${cls}.prototype.${method}; ${cls}.prototype.${method} = function (...a) { globalThis.${counter} = (globalThis.${counter} ?? 0) + 1; return f.apply(this, a); }; }\n`;
  for (const [file, cls, method, counter] of [
    ['view.js', 'FleetView', 'render', '__renders'],
    ['changes.js', 'FleetMirror', 'apply', '__lines'],
  ] as const) {
    await page.route(`**/web/${file}`, async (r) => {
      const res = await r.fetch();
      await r.fulfill({ response: res, body: (await res.text()) + wrap(cls, method, counter) });
    });
  }
  return async () => {
    const [renders, lines] = await page.evaluate<[number, number]>('[globalThis.__renders ?? 0, globalThis.__lines ?? 0]');
    return { renders, lines };
  };
}

async function floodHost(rows: number): Promise<{ link: FakeCollector; seq: number }> {
  fc = await FakeCollector.connect(hub!.url, TOKENS.build1);
  const link = fc;
  beat = setInterval(() => link.heartbeat(), 250);
  fc.send({ type: 'hello', protocol: 1, host: 'build1', collector_version: '0.1.0-test', epoch: EPOCH_A, actions_allowed: ['approve'] });
  await fc.next((f) => f.type === 'welcome');
  fc.snapshot(
    1,
    Array.from({ length: rows }, (_, i) => floodRow(i, 0)),
  );
  await until(() => (hub!.store.rows().length === rows ? true : undefined));
  return { link, seq: 1 };
}

describe('web page: falling behind', () => {
  it('is paused by the hub while it does not read, then catches up from a fresh document and equals /v1/agents', async () => {
    hub = await startTestHub({ heartbeatMs: 1000, subscriberMaxBufferedBytes: BACKLOG, sseDrainTimeoutMs: 2000 });
    const flood = await floodHost(ROWS);
    const link = flood.link;
    let seq = flood.seq;

    context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    await page.goto(`${hub.url}/#token=${TOKENS.viewer}`);
    await expect.poll(() => page.locator('#mode').getAttribute('data-mode')).toBe('live');
    await expect.poll(() => shown(page), { timeout: 10_000 }).toEqual(await hubRows());

    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const heapBefore = await heapBytes(cdp);

    // The page stops reading: its main thread is held in the debugger (the page's one-second
    // ticker runs script soon, which is where it stops).
    await cdp.send('Debugger.enable');
    const paused = new Promise<void>((resolve) => cdp.once('Debugger.paused', () => resolve()));
    await cdp.send('Debugger.pause');
    await paused;

    const PAUSED = 'subscriber behind; paused until it catches up';
    const CAUGHT_UP = 'subscriber caught up; fresh document sent';
    // Flood: every row changes each round, until the hub says it paused the page's stream. The
    // browser's own buffers may still take in what the hub had queued, and the hub then sees the
    // reader as caught up although the page is still held; flooding again fills them further.
    let round = 0;
    const deadline = Date.now() + 20_000;
    for (let attempt = 1; ; attempt++) {
      const pauses = logged(PAUSED);
      while (logged(PAUSED) === pauses) {
        if (Date.now() > deadline) throw new Error(`hub never paused the page after ${round} rounds`);
        round += 1;
        for (let i = 0; i < ROWS; i += 50)
          link.delta(
            ++seq,
            Array.from({ length: 50 }, (_, k) => floodRow(i + k, round)),
          );
        await new Promise((r) => setTimeout(r, 20));
      }
      // What changes while the page is paused reaches it only through the fresh document: every
      // row ends "done", a class the flood never used, and a third of them leave.
      const caught = logged(CAUGHT_UP);
      const finalRows = Array.from({ length: ROWS }, (_, i) => floodRow(i, round + 1, { state: 'idle', attention: true, done: true }));
      link.delta(
        ++seq,
        finalRows.filter((_, i) => i % 3 !== 0),
        finalRows.filter((_, i) => i % 3 === 0).map((r) => r.pane),
      );
      await until(() => (hub!.store.rows().length === ROWS - ROWS / 3 ? true : undefined));
      // Longer than the hub takes to flush and to look for a caught-up reader: still paused means
      // the change was held back from the page.
      await new Promise((r) => setTimeout(r, 400));
      if (logged(CAUGHT_UP) === caught) break;
      if (attempt === 5) throw new Error('the hub kept finding the held page caught up');
    }

    await cdp.send('Debugger.resume');
    const caughtUp = logged(CAUGHT_UP);
    await until(() => (logged(CAUGHT_UP) > caughtUp ? true : undefined), 20_000, 50);
    await expect.poll(() => shown(page), { timeout: 15_000 }).toEqual(await hubRows());
    expect(await page.locator('#mode').getAttribute('data-mode')).toBe('live');
    // It was the stream, not the polling fallback, that brought the page back.
    expect(logged('subscriber joined')).toBe(1);

    // The page holds the fleet, not the flood it missed.
    const heapAfter = await heapBytes(cdp);
    expect(heapAfter).toBeLessThan(heapBefore + 4 * 1024 * 1024);
  });

  it('applies every line of a flood it is too slow for, but redraws once per frame, and ends equal to /v1/agents', async () => {
    hub = await startTestHub({ heartbeatMs: 1000 });
    const rows = 120;
    const flood = await floodHost(rows);
    const link = flood.link;
    let seq = flood.seq;
    context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    const calls = await countCalls(page);
    await page.goto(`${hub.url}/#token=${TOKENS.viewer}`);
    await expect.poll(() => shown(page), { timeout: 10_000 }).toEqual(await hubRows());
    const cdp = await context.newCDPSession(page);
    // A slow phone: drawing the fleet now takes longer than the hub takes to send the next line.
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 8 });
    const before = await calls();
    for (let round = 1; round <= 150; round++) {
      link.delta(
        ++seq,
        Array.from({ length: 6 }, (_, k) => floodRow((round * 6 + k) % rows, round)),
      );
      await new Promise((r) => setTimeout(r, 8));
    }
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    await expect.poll(() => shown(page), { timeout: 15_000 }).toEqual(await hubRows());
    const after = await calls();
    const lines = after.lines - before.lines;
    const renders = after.renders - before.renders;
    expect(lines).toBeGreaterThanOrEqual(20);
    // Once per line would be `lines` redraws.
    expect(renders).toBeLessThan(lines / 2);
  });
});

describe('web page: a token a reload removed', () => {
  it('shows the sign-in with a message saying the hub no longer accepts it, forgets it, and stops asking', async () => {
    hub = await startTestHub({ heartbeatMs: 1000 });
    await floodHost(3);
    context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${hub.url}/#token=${TOKENS.viewer}`);
    await expect.poll(() => page.locator('#mode').getAttribute('data-mode')).toBe('live');
    const asked: string[] = [];
    page.on('request', (r) => asked.push(new URL(r.url()).pathname));

    // vic is no longer a client: the reload ends vic's open stream, and the token is refused.
    const config = testConfig();
    await hub.reload({ ...config, clients: config.clients.filter((c) => c.name !== 'vic') });
    await expect.poll(() => page.locator('#login').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.locator('#login-error').textContent()).toBe('The hub no longer accepts this token.');
    expect(await page.evaluate(`localStorage.getItem('tma-fleet-token')`)).toBeNull();
    expect(await page.locator('#fleet').isVisible()).toBe(false);
    // No silent retrying behind the sign-in form.
    const settled = asked.length;
    await new Promise((r) => setTimeout(r, 2500));
    expect(asked.slice(settled)).toEqual([]);
    expect(asked.filter((p) => p.startsWith('/v1/'))).not.toHaveLength(0);
  });
});
