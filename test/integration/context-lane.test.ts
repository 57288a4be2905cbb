// The context lane on a real server: statusline and pi payloads through `tma event --kind
// context`, the Codex rollout tail inside a cycle, what rows show, and the compact gate on it.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { FIXTURES, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
let codexHome: string;
beforeEach(() => {
  t = new ScratchTmux('ctx');
  codexHome = mkdtempSync(join(tmpdir(), 'tma-codex-'));
});
afterEach(() => {
  t.kill();
  rmSync(codexHome, { recursive: true, force: true });
});

const sample = (name: string) => readFileSync(join(FIXTURES, 'telemetry', name), 'utf8');

function event(pane: string, agent: string, payload: string, viaFlag = false) {
  const paneArgs = viaFlag ? ['--pane', pane] : [];
  return tma(['-L', t.name, 'event', '--agent', agent, '--kind', 'context', ...paneArgs, '--payload', '-'], {
    env: viaFlag ? {} : { TMUX_PANE: pane },
    input: payload,
  });
}

async function lsRow(pane: string, env: NodeJS.ProcessEnv = {}): Promise<Record<string, unknown>> {
  const r = await tma(['-L', t.name, 'ls', '--json'], { env });
  expect(r.code, r.stderr).toBe(0);
  const row = (JSON.parse(r.stdout) as { agents: Record<string, unknown>[] }).agents.find((a) => a.pane === pane);
  expect(row, r.stdout).toBeDefined();
  return row!;
}

const gauge = (pane: string) => ({
  pct: t.option(pane, '@agent_context_pct'),
  tokens: t.option(pane, '@agent_tokens'),
  at: t.option(pane, '@agent_context_at'),
});

it('a Claude statusline sets the gauge; rows show it; a subagent and an overflow leave it alone', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeIdle);
  await tma(['-L', t.name, 'event', '--agent', 'claude', '--kind', 'SessionStart', '--payload', '-'], {
    env: { TMUX_PANE: pane },
    input: '{"session_id":"a1b2c3d4-0000-4000-8000-00000000aa01"}',
  });
  expect(t.option(pane, '@agent_session')).toBe('a1b2c3d4-0000-4000-8000-00000000aa01');

  const before = Date.now();
  expect(await event(pane, 'claude', sample('claude-statusline.json'), true)).toEqual({ code: 0, stdout: '', stderr: '' });
  let g = gauge(pane);
  expect(g.pct).toBe('43');
  expect(g.tokens).toBe('85400');
  expect(Number(g.at)).toBeGreaterThanOrEqual(before);
  expect(t.option(pane, '@agent_tokens_at')).toBe(g.at);

  const row = await lsRow(pane);
  expect(row).toMatchObject({ context: 43, tokens: 85400, context_at_ms: Number(g.at), cost_usd: 1.37, quota: null });
  const status = await tma(['-L', t.name, 'status', '--format', 'json']);
  expect(JSON.parse(status.stdout)).toMatchObject({ schema: 1, context_max: 43 });

  // A subscriber's payload also carries its rate limits: the tightest window becomes the quota.
  await event(pane, 'claude', sample('claude-statusline-limits.json'));
  expect(t.option(pane, '@agent_quota_window')).toBe('seven_day');
  const limited = await lsRow(pane);
  expect(limited).toMatchObject({ context: 12, tokens: 24000, cost_usd: 4.05 });
  expect(limited.quota).toEqual({ pct: 61, window: 'seven_day', resets_at_ms: 1_795_400_000_000, at_ms: Number(t.option(pane, '@agent_quota_at')) });
  await event(pane, 'claude', sample('claude-statusline.json'), true);
  g = gauge(pane);

  // A subagent's statusline names another session: dropped.
  await event(pane, 'claude', sample('claude-statusline-subagent.json'));
  expect(gauge(pane)).toEqual(g);
  // A cumulative percentage from an old release: dropped, not cleared.
  await event(pane, 'claude', sample('claude-statusline-overflow.json'));
  expect(gauge(pane)).toEqual(g);
  // No context window yet: cleared, marker advanced.
  await event(pane, 'claude', '{"session_id":"a1b2c3d4-0000-4000-8000-00000000aa01","version":"2.1.140","context_window":null}');
  const cleared = gauge(pane);
  expect(cleared.pct).toBe('');
  expect(cleared.tokens).toBe('');
  expect(Number(cleared.at)).toBeGreaterThanOrEqual(Number(g.at));
  const row2 = await lsRow(pane);
  expect(row2.context).toBeNull();
  expect(row2.tokens).toBeNull();
  expect(row2.context_at_ms).toBe(Number(cleared.at));
}, 60_000);

it('an older reading cannot overwrite a newer one', async () => {
  const pane = t.start();
  await t.standIn(pane, 'claude', SCREENS.claudeIdle);
  await tma(['-L', t.name, 'ls']);
  const future = String(Date.now() + 600_000);
  t.tmux('set-option', '-p', '-t', pane, '@agent_context_pct', '55');
  t.tmux('set-option', '-p', '-t', pane, '@agent_context_at', future);
  await event(pane, 'claude', sample('claude-statusline.json'));
  expect(gauge(pane)).toEqual({ pct: '55', tokens: '', at: future });
});

it('cursor and pi payloads land; what they cannot compute writes nothing', async () => {
  const cur = t.start();
  await t.standIn(cur, 'node', SCREENS.cursorIdle);
  const pi = t.newPane();
  await t.standIn(pi, 'node', SCREENS.piIdle);
  await tma(['-L', t.name, 'ls']);

  await event(cur, 'cursor', sample('cursor-statusline.json'));
  expect(gauge(cur)).toMatchObject({ pct: '48', tokens: '95000' });
  await event(cur, 'cursor', '{"session_id":"x","context_window":{"total_input_tokens":"n/a"}}');
  expect(gauge(cur)).toMatchObject({ pct: '48', tokens: '95000' });

  await event(pi, 'pi', sample('pi-context.json'));
  expect(gauge(pi)).toMatchObject({ pct: '50', tokens: '99200' });
  await event(pi, 'pi', '{"session_id":"ses_ownsample01","context_usage":null}');
  expect(gauge(pi)).toMatchObject({ pct: '50', tokens: '99200' });

  // An agent without context telemetry (gemini) is a no-op.
  await event(cur, 'gemini', '{"used_percentage":10}');
  expect(gauge(cur).pct).toBe('48');
});

it('the Codex rollout tail stamps percentage and model inside a cycle, and follows the file', async () => {
  const pane = t.start();
  await t.standIn(pane, 'codex', SCREENS.codexIdle);
  const session = '0aa0aa0a-1b1b-7c2c-8d3d-4e4e4e4e4e4e';
  await tma(['-L', t.name, 'event', '--agent', 'codex', '--kind', 'SessionStart', '--payload', '-'], {
    env: { TMUX_PANE: pane },
    input: `{"session_id":"${session}"}`,
  });
  const dir = join(codexHome, 'sessions', '2026', '11', '30');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `rollout-2026-11-30T10-00-00-${session}.jsonl`);
  // Our sample ends mid-line, the way a file being written does.
  writeFileSync(file, sample('codex-rollout.jsonl').replace(/\n$/, ''));

  const env = { CODEX_HOME: codexHome };
  const row = await lsRow(pane, env);
  expect(row).toMatchObject({ context: 50, tokens: null });
  expect(t.option(pane, '@agent_context_pct')).toBe('50');
  expect(t.option(pane, '@agent_model')).toBe('gpt-5.1-codex');
  expect(Number(t.option(pane, '@agent_context_at'))).toBe(row.context_at_ms);

  // The half-written line completes: the next cycle reads the newer count.
  appendFileSync(file, 'put_tokens":9000,"total_tokens":190400},"model_context_window":272000}}}\n');
  expect((await lsRow(pane, env)).context).toBe(70);

  // No CODEX_HOME and no HOME: the tail is skipped, the gauge stands.
  const r = await tma(['-L', t.name, 'status', '--format', 'json'], { env: { CODEX_HOME: '', HOME: '' } });
  expect(r.code).toBe(0);
  expect(t.option(pane, '@agent_context_pct')).toBe('70');
});

it('compact fires only when its gate holds: idle and at least 75%', async () => {
  const pane = t.start();
  const claude = await t.standIn(pane, 'claude', SCREENS.claudeIdle);
  await tma(['-L', t.name, 'ls']);
  const act = async () => {
    const r = await tma(['-L', t.name, 'act', 'compact', '--pane', pane, '--json']);
    return { code: r.code, doc: JSON.parse(r.stdout) as { outcome: string; reason: string | null } };
  };

  // No gauge yet.
  expect(await act()).toMatchObject({ code: 4, doc: { outcome: 'refused', reason: 'gated' } });
  await event(pane, 'claude', '{"version":"2.1.140","context_window":{"used_percentage":50}}');
  expect(await act()).toMatchObject({ code: 4, doc: { outcome: 'refused', reason: 'gated' } });
  expect(claude.keys()).toBe('');

  // High enough, but the agent is working.
  await event(pane, 'claude', '{"version":"2.1.140","context_window":{"used_percentage":80}}');
  await claude.paint(SCREENS.claudeWorking);
  // Detection has seen it working (a one-shot act trusts a stamp younger than the freshness window).
  const seenBy = Date.now() + 10_000;
  while ((await lsRow(pane)).state !== 'working' && Date.now() < seenBy) await new Promise((r) => setTimeout(r, 300));
  const busy = await act();
  expect(busy).toMatchObject({ code: 4, doc: { outcome: 'refused', reason: 'gated' } });
  expect(claude.keys()).toBe('');

  await claude.paint(SCREENS.claudeIdle);
  let fired: Awaited<ReturnType<typeof act>> | null = null;
  // The idle verdict needs the dwell to pass; keep asking until the gate opens.
  const end = Date.now() + 15_000;
  while (Date.now() < end) {
    fired = await act();
    if (fired.doc.outcome === 'sent') break;
    await new Promise((r) => setTimeout(r, 500));
  }
  expect(fired).toMatchObject({ code: 0, doc: { outcome: 'sent' } });
  await waitFor(() => claude.keys().includes('/compact'), 'the /compact keys');

  // A Codex pane has no compact transport.
  const cx = t.newPane();
  await t.standIn(cx, 'codex', SCREENS.codexIdle);
  await tma(['-L', t.name, 'ls']);
  const r = await tma(['-L', t.name, 'act', 'compact', '--pane', cx, '--json']);
  expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'refused', reason: 'wrong-agent' });
}, 60_000);
