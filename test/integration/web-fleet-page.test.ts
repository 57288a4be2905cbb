// The fleet page as a person away from their desk uses it: four hosts (real `tma collector`
// processes, each on its own scratch tmux server with stand-in agents), one hub, and headless
// Chromium at a phone's size and a desk's. Every tap is checked where it lands: on every
// stand-in's key log. Screenshots of both sizes go to test-output/screenshots (see README).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetRow } from '../../shared/fleet.js';
import { startTestHub, testConfig, type TestHub } from '../support/hub-harness.js';
import { REPO, ScratchTmux, waitFor, type StandIn } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(REPO, 'test-output/screenshots');
const HOSTS = ['build1', 'laptop', 'edge', 'mini'] as const;
type Host = (typeof HOSTS)[number];
const TOKENS: Record<Host | 'operator', string> = {
  build1: 'tok-wf-build1-a1',
  laptop: 'tok-wf-laptop-b2',
  edge: 'tok-wf-edge-c3',
  mini: 'tok-wf-mini-d4',
  operator: 'tok-wf-operator-e5',
};
/** What each agent's approve sends (manifests/actions/approve.toml): claude "1", codex "y" ("Yes, proceed", wherever its cursor is). */
const APPROVE_KEY: Record<string, string> = { claude: '1', codex: 'y' };
const TEN_MIN = 10 * 60_000;

interface Pane {
  host: Host;
  agent: 'claude' | 'codex' | 'gemini' | 'opencode';
  session: string;
  blocked: string;
  working: string;
  standIn: StandIn;
  /** Expected key log so far. */
  keys: string;
}

let dir: string;
let hub: TestHub;
let browser: Browser;
const scratches: ScratchTmux[] = [];
const collectors: ChildProcess[] = [];
const panes: Pane[] = [];
/** The six panes the hosts would approve. */
let approvable: Pane[] = [];
let oldPane: Pane;

const SCREEN: Record<Pane['agent'], { blocked: string; working: string }> = {
  claude: { blocked: SCREENS.claudeBlocked, working: SCREENS.claudeWorking },
  codex: { blocked: SCREENS.codexBlocked, working: SCREENS.codexWorking },
  gemini: { blocked: SCREENS.geminiBlocked, working: 'gemini-working.txt' },
  opencode: { blocked: SCREENS.opencodeBlocked, working: SCREENS.opencodeWorking },
};

/** Which agents each host runs, one tmux session (= where) each. */
const LAYOUT: Record<Host, { agent: Pane['agent']; session: string }[]> = {
  build1: [
    { agent: 'claude', session: 'proj-api' },
    { agent: 'codex', session: 'infra' },
  ],
  laptop: [
    { agent: 'claude', session: 'notes' },
    { agent: 'gemini', session: 'ledger' },
  ],
  edge: [
    { agent: 'codex', session: 'web' },
    { agent: 'opencode', session: 'docs' },
  ],
  mini: [
    { agent: 'claude', session: 'ops' },
    { agent: 'claude', session: 'billing' },
  ],
};

const fleet = async (): Promise<{ agents: FleetRow[]; hosts: Record<string, unknown>[] }> =>
  (await (await hub.get('/v1/agents', TOKENS.operator)).json()) as never;
const rowOf = async (p: Pane) => (await fleet()).agents.find((r) => r.host === p.host && r.pane === p.standIn.pane);

async function allRows(cond: (r: FleetRow, p: Pane) => boolean, what: string, list: Pane[] = panes): Promise<void> {
  const end = Date.now() + 30_000;
  for (;;) {
    const d = await fleet();
    const ok = list.every((p) => {
      const r = d.agents.find((x) => x.host === p.host && x.pane === p.standIn.pane);
      return r !== undefined && !r.stale && cond(r, p);
    });
    if (ok) return;
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(d.agents.map((r) => [r.host, r.pane, r.agent, r.state, r.detail]))}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tma-web-fleet-'));
  mkdirSync(SHOTS, { recursive: true });
  mkdirSync(join(dir, 'cfg/tma'), { recursive: true });
  // Every collector cycle re-detects, so a repaint reaches the hub within about a second.
  writeFileSync(join(dir, 'cfg/tma/config.toml'), '[fold]\nfreshness_secs = 0\n');
  // Each side drops a link silent for three of its own heartbeats: the hub beats faster than the
  // collectors' 400 ms, and a collector faster than the hub's dead-link timer.
  hub = await startTestHub({
    heartbeatMs: 300,
    config: testConfig({
      collectors: HOSTS.map((host) => ({ host, token: TOKENS[host] })),
      clients: [{ name: 'olga', token: TOKENS.operator, role: 'operator' }],
    }),
  });
  for (const host of HOSTS) {
    const scratch = new ScratchTmux(`wf${host}`);
    scratches.push(scratch);
    LAYOUT[host].forEach((l, i) => {
      if (i === 0) scratch.start(l.session);
      // The same quick, profile-free shell ScratchTmux.start runs.
      else scratch.tmux('new-session', '-d', '-s', l.session, '-x', '80', '-y', '24', `bash --rcfile ${join(scratch.dir, 'rc')} --noprofile -i`);
    });
    for (const l of LAYOUT[host]) {
      const pane = scratch.tmux('display-message', '-p', '-t', `${l.session}:`, '#{pane_id}').trim();
      // Gemini runs as plain node; its title tells it apart.
      const standIn = await scratch.standIn(pane, l.agent === 'gemini' ? 'node' : l.agent, SCREEN[l.agent].blocked);
      panes.push({ host, agent: l.agent, session: l.session, blocked: SCREEN[l.agent].blocked, working: SCREEN[l.agent].working, standIn, keys: '' });
    }
    writeFileSync(join(dir, `${host}.token`), `${TOKENS[host]}\n`);
    const child = spawn(
      process.execPath,
      [
        join(REPO, 'bin/tma.js'),
        'collector',
        '--hub',
        `ws://127.0.0.1:${hub.port}`,
        '--token-file',
        join(dir, `${host}.token`),
        '--host-name',
        host,
        '--socket-name',
        scratch.name,
        '--interval',
        '0.3',
      ],
      {
        env: {
          ...process.env,
          TMUX: '',
          TMUX_PANE: '',
          XDG_RUNTIME_DIR: join(dir, `run-${host}`),
          XDG_STATE_HOME: join(dir, `state-${host}`),
          XDG_CONFIG_HOME: join(dir, 'cfg'),
          TMA_COLLECTOR_HEARTBEAT_MS: '400',
        },
        stdio: ['ignore', 'ignore', 'ignore'],
      },
    );
    collectors.push(child);
  }
  approvable = panes.filter((p) => p.agent === 'claude' || p.agent === 'codex');
  oldPane = panes.find((p) => p.host === 'mini' && p.session === 'billing')!;
  await allRows((r) => r.state === 'blocked', 'every stand-in blocked on the hub');

  // One prompt has been waiting ten minutes: moved back through the contract's own pane option.
  const since = Date.now() - TEN_MIN;
  const mini = scratches[HOSTS.indexOf('mini')]!;
  mini.tmux('set-option', '-p', '-t', oldPane.standIn.pane, '@agent_since', String(since));
  await allRows((r) => r.since_ms === since, 'the ten-minute since on the hub', [oldPane]);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
    env: { ...process.env, HOME: dir, XDG_CONFIG_HOME: join(dir, 'chrome-config'), XDG_CACHE_HOME: join(dir, 'chrome-cache') },
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  for (const c of collectors) c.kill('SIGKILL');
  await hub?.close();
  for (const s of scratches) s.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function openPage(size: { width: number; height: number }, phone: boolean): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: size, isMobile: phone, hasTouch: phone, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(`${hub.url}/#token=${TOKENS.operator}`);
  await expect.poll(() => page.locator('#needs-list .agent-row').count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(8);
  return { context, page };
}

const needsRow = (page: Page, p: Pane) => page.locator(`#needs-list .agent-row[data-host="${p.host}"][data-pane="${p.standIn.pane}"]`);
const approveOf = (page: Page, p: Pane) => needsRow(page, p).locator('button.act-approve');

/** Wait until no stand-in's log differs from what it should hold, then check them all. */
async function keysSettled(): Promise<void> {
  await waitFor(() => panes.every((p) => p.standIn.keys().length >= p.keys.length), 'keys at the stand-ins', 10_000);
  await new Promise((r) => setTimeout(r, 300));
  expect(Object.fromEntries(panes.map((p) => [`${p.host}/${p.session}`, p.standIn.keys()]))).toEqual(
    Object.fromEntries(panes.map((p) => [`${p.host}/${p.session}`, p.keys])),
  );
}

async function fullyInView(page: Page, p: Pane): Promise<void> {
  const button = approveOf(page, p);
  // As a person scrolls to it: into the middle of the screen, not flush with an edge.
  await button.evaluate((b) => b.scrollIntoView({ block: 'center' }));
  const box = await button.boundingBox();
  const vp = page.viewportSize()!;
  expect(box, `${p.host}/${p.session} approve has a box`).not.toBeNull();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.y).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(vp.width);
  expect(box!.y + box!.height).toBeLessThanOrEqual(vp.height);
  // Big enough for a thumb on a phone.
  if (vp.width < 700) expect(box!.height).toBeGreaterThanOrEqual(44);
}

/** Tap Approve on `p`, read the confirmation, confirm; one key must reach p and nothing else. */
async function approveOne(page: Page, p: Pane, phone: boolean): Promise<void> {
  await fullyInView(page, p);
  expect(await approveOf(page, p).getAttribute('aria-label')).toBe(`Approve ${p.agent} on ${p.host}, ${(await rowOf(p))!.locator}`);
  if (phone) await approveOf(page, p).tap();
  else await approveOf(page, p).click();
  const dialog = page.locator('#confirm');
  await expect.poll(() => dialog.isVisible()).toBe(true);
  expect(await page.locator('#confirm-title').textContent()).toBe(`Approve ${p.agent} on ${p.host}?`);
  expect(await page.locator('#confirm-where').textContent()).toContain(`(pane ${p.standIn.pane})`);
  expect((await page.locator('#confirm-ask').textContent())!.length).toBeGreaterThan(0);
  const go = page.locator('#confirm-go');
  if (phone) await go.tap();
  else await go.click();
  p.keys += APPROVE_KEY[p.agent]!;
  await keysSettled();
  await expect.poll(() => needsRow(page, p).locator('.outcome').textContent()).toBe('approve: sent');
}

async function fullShot(page: Page, name: string): Promise<void> {
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: join(SHOTS, name), fullPage: true });
}

async function noHorizontalScroll(page: Page): Promise<void> {
  expect(await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth')).toBe(true);
}

/** The approved panes turn back into fresh prompts (new episodes) for the next round. */
async function reblock(list: Pane[]): Promise<void> {
  await Promise.all(list.map((p) => p.standIn.paint(p.working)));
  await allRows((r) => r.state === 'working', 'the agents at work', list);
  await Promise.all(list.map((p) => p.standIn.paint(p.blocked)));
  await allRows((r) => r.state === 'blocked', 'the prompts back', list);
}

describe('the fleet page with four hosts', () => {
  it('offers Approve only where the host would fire it, and ages prompts from since_ms', async () => {
    const { context, page } = await openPage({ width: 1280, height: 800 }, false);
    try {
      // Eight blocked panes need you, all approvable: Gemini's dialog takes keys too, and so does
      // an OpenCode whose API the host never discovered (no plugin: its keys answer it).
      await expect.poll(() => page.title()).toBe('(8) tma fleet');
      for (const p of panes) {
        const offered = await needsRow(page, p)
          .locator('button.act')
          .evaluateAll((bs) => bs.map((b) => b.getAttribute('data-action')));
        expect(offered, `${p.host}/${p.agent}`).toEqual(['approve', 'deny']);
      }
      const hosts = (await fleet()).hosts;
      expect(hosts.every((h) => typeof h.clock_offset_ms === 'number' && Math.abs(h.clock_offset_ms) < 2000)).toBe(true);
      expect(hosts.find((h) => h.host === 'laptop')!.actions_by_agent).toMatchObject({
        claude: { approve: 'keys' },
        gemini: { approve: 'keys', deny: 'keys', interrupt: 'keys' },
      });

      // The ten-minute prompt is the oldest: first in the list, and its age is now - since_ms.
      const first = page.locator('#needs-list .agent-row').first();
      expect(await first.getAttribute('data-pane')).toBe(oldPane.standIn.pane);
      expect(await first.getAttribute('data-host')).toBe('mini');
      const since = (await rowOf(oldPane))!.since_ms;
      const shownMs = Number(await first.locator('.c-age').getAttribute('data-ms'));
      const measuredAt = Date.now();
      expect(Math.abs(shownMs - (measuredAt - since))).toBeLessThan(2000);
      expect(await first.locator('.c-age').textContent()).toBe('10m');
      await noHorizontalScroll(page);
    } finally {
      await context.close();
    }
  }, 60_000);

  /** One round at a size: every approvable prompt answered from the page, then fresh prompts again. */
  async function approveEvery(size: { width: number; height: number }, phone: boolean, after?: (page: Page) => Promise<void>) {
    const { context, page } = await openPage(size, phone);
    const name = `fleet-${size.width}x${size.height}`;
    try {
      await noHorizontalScroll(page);
      await page.screenshot({ path: join(SHOTS, `${name}.png`) });
      await fullShot(page, `${name}-full.png`);
      for (const p of approvable) await approveOne(page, p, phone);
      await fullShot(page, `${name}-answered.png`);
      await after?.(page);
    } finally {
      await context.close();
    }
    await reblock(approvable);
  }

  it('at 390×844: every Approve is reachable in view and one tap + confirm sends one key to that stand-in', async () => {
    await approveEvery({ width: 390, height: 844 }, true, async (page) => {
      await page.setViewportSize({ width: 360, height: 740 });
      await noHorizontalScroll(page);
    });
  }, 120_000);

  it('at 1280×800: the same, with the mouse', async () => {
    await approveEvery({ width: 1280, height: 800 }, false);
  }, 120_000);

  it('holds the list still after a tap: a second tap at the same spot never reaches another agent', async () => {
    const { context, page } = await openPage({ width: 390, height: 844 }, true);
    try {
      // The list, oldest first; tap the third, then make the first one leave within a second,
      // which would move every row below it up by one card.
      const order = await page
        .locator('#needs-list .agent-row')
        .evaluateAll((rs) => rs.map((r) => `${r.getAttribute('data-host')}|${r.getAttribute('data-pane')}`));
      const byKey = (k: string) => panes.find((p) => `${p.host}|${p.standIn.pane}` === k)!;
      const listed = order.map(byKey);
      // The card right after the target must carry buttons too: it is the one that would slide
      // under the finger if the list moved.
      const target = listed.find((p, i) => i >= 2 && approvable.includes(p) && approvable.includes(listed[i + 1]!))!;
      expect(target).toBeDefined();
      const leaver = listed[0]!;
      const button = approveOf(page, target);
      await button.scrollIntoViewIfNeeded();
      const box = (await button.boundingBox())!;
      const x = box.x + box.width / 2;
      const y = box.y + box.height / 2;
      await page.touchscreen.tap(x, y);
      const tappedAt = Date.now();
      await page.locator('#confirm-go').tap();
      await leaver.standIn.paint(leaver.working);
      // The page learns of it (its fleet row turns to working) well within the hold.
      const leaverFleetRow = page.locator(`section.host[data-host="${leaver.host}"] .agent-row[data-pane="${leaver.standIn.pane}"]`);
      await expect.poll(() => leaverFleetRow.getAttribute('data-class'), { timeout: 5000, interval: 50 }).toBe('working');
      const sawChangeAfterMs = Date.now() - tappedAt;
      const under = await page.evaluate(
        `(() => { const b = document.elementFromPoint(${x}, ${y})?.closest('button'); return b ? b.getAttribute('aria-label') : null; })()`,
      );
      expect(under === null || String(under).includes(`${target.agent} on ${target.host}`), `under the finger: ${String(under)}`).toBe(true);
      // Kept in its place, greyed, with nothing left to press.
      expect(await needsRow(page, leaver).getAttribute('class')).toContain('left');
      await page.touchscreen.tap(x, y);
      target.keys += APPROVE_KEY[target.agent]!;
      await keysSettled();
      expect(await page.locator('#confirm').isVisible()).toBe(false);
      // Then the list settles: the leaver goes, and the rows close up.
      await expect.poll(() => needsRow(page, leaver).count(), { timeout: 8000 }).toBe(0);
      expect(sawChangeAfterMs).toBeLessThan(3000);
    } finally {
      await context.close();
    }
  }, 60_000);
});
