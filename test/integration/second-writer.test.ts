// A second producer of @agent_state, writing with plain tmux commands the way the contract page
// tells it to, next to our engine and our hook path.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
let config: string;
let lastCall = 0;

beforeEach(() => {
  t = new ScratchTmux('sw');
  config = join(t.dir, 'config.toml');
  writeFileSync(config, '[fold]\nfreshness_secs = 0\ndwell_secs = 0\n');
});
afterEach(() => t.kill());

async function nextSecond(): Promise<void> {
  const wait = Math.floor(lastCall / 1000) * 1000 + 1000 - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait + 5));
  lastCall = Date.now();
}

/** The previous verb's cycle ran at some moment before it returned: the next waits for the second after that. */
function returned(): void {
  lastCall = Date.now();
}

async function ls(): Promise<{ pane: string; agent: string; state: string }[]> {
  await nextSecond();
  const r = await tma(['-L', t.name, '--config', config, 'ls', '--json']);
  returned();
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout).agents;
}

/** The contract page's recipe: every field guarded by evidence-time arbitration, stamped_at last. */
function writerStamp(pane: string, state: string, evidenceAt: number): void {
  const s = `#{&&:#{==:#{@agent_source},hook},#{e|<:${evidenceAt},#{@agent_evidence_at}}}`;
  const set = (key: string, value: string) => ['set-option', '-p', '-F', '-t', pane, key, `#{?${s},#{${key}},${value}}`];
  t.tmux(
    ...set('@agent_state', state),
    ';',
    ...set('@agent_source', 'hook'),
    ';',
    ...set('@agent_evidence_at', String(evidenceAt)),
    ';',
    ...set('@agent_since', String(evidenceAt)),
    ';',
    'set-option',
    '-p',
    '-t',
    pane,
    '@agent_name',
    'pi',
    ';',
    ...set('@agent_stamped_at', String(evidenceAt)),
  );
}

function rollups(pane: string): [string, string] {
  return [t.tmux('show-options', '-wqv', '-t', pane, '@agent_summary').trim(), t.tmux('show-options', '-qv', '-t', pane, '@agent_session_summary').trim()];
}

describe('a second writer that follows the contract', () => {
  it('is listed and counted in both rollups', async () => {
    const pane = t.start();
    await t.standIn(pane, 'node', SCREENS.piIdle);
    writerStamp(pane, 'working', Date.now());
    const rows = await ls();
    expect(rows).toMatchObject([{ pane, agent: 'pi', state: 'working' }]);
    expect(rollups(pane)).toEqual(['working:1', 'working:1']);
  });

  it('is arbitrated by evidence time against our own hook writes, both ways', async () => {
    const pane = t.start();
    await t.standIn(pane, 'node', SCREENS.piIdle);
    const before = Date.now();
    writerStamp(pane, 'working', before);
    // Our hook event is newer: it wins.
    await tma(['-L', t.name, 'event', '--agent', 'pi', '--kind', 'agent_settled', '--payload', '-'], { env: { TMUX_PANE: pane } });
    expect(t.option(pane, '@agent_state')).toBe('idle');
    const ours = Number(t.option(pane, '@agent_evidence_at'));
    expect(ours).toBeGreaterThanOrEqual(before);
    // The writer reports something older than our claim: it holds off.
    writerStamp(pane, 'working', ours - 5000);
    expect(t.option(pane, '@agent_state')).toBe('idle');
    expect(t.option(pane, '@agent_evidence_at')).toBe(String(ours));
    // Newer evidence from the writer wins again.
    writerStamp(pane, 'working', ours + 1);
    expect(t.option(pane, '@agent_state')).toBe('working');
  });

  it('is cleaned up when its agent exits', async () => {
    const pane = t.start();
    const s = await t.standIn(pane, 'node', SCREENS.piIdle);
    writerStamp(pane, 'working', Date.now());
    expect(await ls()).toHaveLength(1);
    s.exit();
    await waitFor(() => t.tmux('display-message', '-p', '-t', pane, '#{pane_current_command}').trim() === 'bash', 'shell back');
    expect(await ls()).toEqual([]);
    for (const key of ['@agent_state', '@agent_source', '@agent_evidence_at', '@agent_since', '@agent_stamped_at', '@agent_name']) {
      expect(t.option(pane, key)).toBe('');
    }
    expect(rollups(pane)).toEqual(['', '']);
  });
});

describe('a writer that breaks the contract', () => {
  it('an out-of-set state: absent from ls and rollups, named by doctor, counted by --exit-code', async () => {
    const pane = t.start();
    const other = t.newPane();
    await t.standIn(pane, 'node', SCREENS.piIdle);
    await t.standIn(other, 'claude', SCREENS.claudeIdle);
    writerStamp(pane, 'spinning', Date.now());
    const rows = await ls();
    expect(rows.map((r) => r.pane)).toEqual([other]);
    expect(rollups(other)[1]).toBe('idle:1');

    const doc = JSON.parse((await tma(['-L', t.name, 'doctor', '--json'])).stdout);
    expect(doc.stamp_issues).toHaveLength(1);
    expect(doc.stamp_issues[0]).toMatchObject({ pane, locator: 'main:0.0' });
    expect(doc.stamp_issues[0].problem).toContain('spinning');
    const text = await tma(['-L', t.name, 'doctor']);
    expect(text.stdout).toContain(`stamp: ${pane}`);
    const strict = await tma(['-L', t.name, 'doctor', '--exit-code']);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/tma: doctor: [1-9]\d* warning/);
  });

  it('a state with no @agent_stamped_at is named by doctor', async () => {
    const pane = t.start();
    t.tmux('set-option', '-p', '-t', pane, '@agent_state', 'idle');
    const doc = JSON.parse((await tma(['-L', t.name, 'doctor', '--json'])).stdout);
    expect(doc.stamp_issues).toEqual([{ pane, locator: 'main:0.0', problem: expect.stringContaining('no @agent_stamped_at') }]);
    expect((await tma(['-L', t.name, 'doctor', '--exit-code'])).code).toBe(1);
  });

  it('doctor --exit-code is 0 on a clean server', async () => {
    const pane = t.start();
    await t.standIn(pane, 'claude', SCREENS.claudeIdle);
    await ls();
    const r = await tma(['-L', t.name, 'doctor', '--exit-code']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
