// The reference suite, context lane: every telemetry sample in the reference folder (*.json,
// *.jsonl) replayed on a live tmux server — statusline and pi payloads through the built
// `tma event --kind context`, Codex rollout files through the tail a `tma ls` cycle runs — and
// held to the result the telemetry spec's fixture table gives (§A.10). Needs `npm run build`.
// The samples are read from the reference folder at run time, never copied into the repository.

import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScratchTmux, tma } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FROM_ENV = process.env['TMA_REFERENCE_FIXTURES'];
const DIR = resolve(REPO_ROOT, FROM_ENV !== undefined && FROM_ENV !== '' ? FROM_ENV : '../shared/fixtures');

type Agent = 'claude' | 'cursor' | 'pi' | 'codex';
/** What the gauge holds afterwards: `kept` = the seeded values untouched. */
type Want =
  | { result: 'stamp'; pct: number; tokens: number | null; model?: string | null; owner?: string }
  | { result: 'clear' }
  | { result: 'ignore'; owner?: string }
  | { result: 'model-only'; model: string };

const OWNER = '019f8aac-ff01-75d0-9bb1-7f0eab253ce7';

// The spec's table, one entry per sample.
const TABLE: Record<string, { agent: Agent; want: Want[] }> = {
  'claude_statusline_context.json': { agent: 'claude', want: [{ result: 'stamp', pct: 78, tokens: 156000, owner: OWNER }] },
  'claude_statusline_null_context.json': { agent: 'claude', want: [{ result: 'clear' }] },
  'claude_statusline_cumulative.json': { agent: 'claude', want: [{ result: 'ignore' }] },
  'claude_statusline_pre_fix_version.json': { agent: 'claude', want: [{ result: 'stamp', pct: 41, tokens: null }] },
  'claude_statusline_subagent.json': {
    agent: 'claude',
    want: [
      { result: 'stamp', pct: 15, tokens: 30000 },
      { result: 'ignore', owner: OWNER },
    ],
  },
  'cursor_statusline_context.json': { agent: 'cursor', want: [{ result: 'stamp', pct: 65, tokens: 130000 }] },
  'cursor_statusline_no_context.json': { agent: 'cursor', want: [{ result: 'ignore' }] },
  'cursor_statusline_malformed.json': { agent: 'cursor', want: [{ result: 'ignore' }] },
  'pi_context.json': { agent: 'pi', want: [{ result: 'stamp', pct: 62, tokens: 124000 }] },
  'pi_context_missing.json': { agent: 'pi', want: [{ result: 'ignore' }] },
  'pi_context_unknown_window.json': { agent: 'pi', want: [{ result: 'ignore' }] },
  'codex_rollout_token_count.jsonl': { agent: 'codex', want: [{ result: 'stamp', pct: 57, tokens: null, model: 'gpt-5-codex' }] },
  'codex_rollout_truncated.jsonl': { agent: 'codex', want: [{ result: 'stamp', pct: 33, tokens: null, model: null }] },
  'codex_rollout_no_token_count.jsonl': { agent: 'codex', want: [{ result: 'model-only', model: 'gpt-5-codex' }] },
};

const SEED = { pct: '11', tokens: '22222', at: '1000' };

const folderExists = existsSync(DIR) && statSync(DIR).isDirectory();

if (!folderExists) {
  describe('reference telemetry samples', () => {
    it(`are readable from ${DIR}`, () => {
      throw new Error(`reference fixtures folder not found: ${DIR} (set TMA_REFERENCE_FIXTURES)`);
    });
  });
} else {
  const samples = readdirSync(DIR)
    .filter((n) => n.endsWith('.json') || n.endsWith('.jsonl'))
    .sort();

  describe(`reference telemetry samples in ${DIR}`, { timeout: 60_000 }, () => {
    let t: ScratchTmux;
    let codexHome: string;
    const panes = {} as Record<Agent, string>;

    beforeAll(async () => {
      t = new ScratchTmux('ref-ctx');
      codexHome = mkdtempSync(join(tmpdir(), 'tma-ref-codex-'));
      panes.claude = t.start();
      await t.standIn(panes.claude, 'claude', SCREENS.claudeIdle);
      panes.cursor = t.newPane();
      await t.standIn(panes.cursor, 'node', SCREENS.cursorIdle);
      panes.pi = t.newPane();
      await t.standIn(panes.pi, 'node', SCREENS.piIdle);
      panes.codex = t.newPane();
      await t.standIn(panes.codex, 'codex', SCREENS.codexIdle);
      const r = await tma(['-L', t.name, 'ls', '--json']);
      expect(r.code, r.stderr).toBe(0);
    }, 60_000);
    afterAll(() => {
      t?.kill();
      if (codexHome) rmSync(codexHome, { recursive: true, force: true });
    });

    const opt = (pane: string, key: string) => t.option(pane, key);
    const setOpt = (pane: string, key: string, v: string | null) =>
      v === null ? t.tmux('set-option', '-p', '-u', '-t', pane, key) : t.tmux('set-option', '-p', '-t', pane, key, v);
    function seed(pane: string, owner: string | null): void {
      setOpt(pane, '@agent_context_pct', SEED.pct);
      setOpt(pane, '@agent_tokens', SEED.tokens);
      setOpt(pane, '@agent_tokens_at', SEED.at);
      setOpt(pane, '@agent_context_at', SEED.at);
      setOpt(pane, '@agent_model', null);
      setOpt(pane, '@agent_session', owner);
    }
    const gauge = (pane: string) => ({
      pct: opt(pane, '@agent_context_pct'),
      tokens: opt(pane, '@agent_tokens'),
      at: opt(pane, '@agent_context_at'),
    });

    async function row(pane: string): Promise<Record<string, unknown>> {
      const r = await tma(['-L', t.name, 'ls', '--json'], { env: { CODEX_HOME: codexHome } });
      expect(r.code, r.stderr).toBe(0);
      const found = (JSON.parse(r.stdout) as { agents: Record<string, unknown>[] }).agents.find((a) => a.pane === pane);
      expect(found, `no row for ${pane}: ${r.stdout}`).toBeDefined();
      return found!;
    }

    it('every sample has an expectation, and every expectation a sample', () => {
      expect(samples.filter((n) => !(n in TABLE))).toEqual([]);
      expect(Object.keys(TABLE).filter((n) => !samples.includes(n))).toEqual([]);
    });

    describe.each(samples.filter((n) => n in TABLE))('%s', (name) => {
      const { agent, want } = TABLE[name]!;
      const text = readFileSync(join(DIR, name), 'utf8');

      it.each(want.map((w, i) => [i, w] as const))('case %i gives the table result', async (_i, w) => {
        const pane = panes[agent];
        const owner = 'owner' in w && w.owner !== undefined ? w.owner : null;
        const before = Date.now();
        if (agent === 'codex') {
          // A fresh session per case, so the tail has a file of its own to find.
          const session = `0199${Math.random().toString(16).slice(2, 10)}-aaaa-7bbb-8ccc-${Date.now().toString(16).padStart(12, '0').slice(-12)}`;
          seed(pane, session);
          const dir = join(codexHome, 'sessions', '2026', '07', '25');
          mkdirSync(dir, { recursive: true });
          writeFileSync(join(dir, `rollout-2026-07-25T18-02-41-${session}.jsonl`), text);
        } else {
          seed(pane, owner);
          const r = await tma(['-L', t.name, 'event', '--agent', agent, '--kind', 'context', '--pane', pane, '--payload', '-'], {
            input: text,
          });
          expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
        }
        const got = await row(pane);
        const g = gauge(pane);
        switch (w.result) {
          case 'stamp':
            expect(g.pct).toBe(String(w.pct));
            expect(g.tokens).toBe(w.tokens === null ? '' : String(w.tokens));
            expect(Number(g.at)).toBeGreaterThanOrEqual(before);
            expect(got).toMatchObject({ context: w.pct, tokens: w.tokens, context_at_ms: Number(g.at) });
            if (w.model !== undefined) expect(opt(pane, '@agent_model')).toBe(w.model ?? '');
            break;
          case 'clear':
            expect(g.pct).toBe('');
            expect(g.tokens).toBe('');
            expect(Number(g.at)).toBeGreaterThanOrEqual(before);
            expect(got).toMatchObject({ context: null, tokens: null, context_at_ms: Number(g.at) });
            break;
          case 'ignore':
            expect(g).toEqual(SEED);
            expect(got).toMatchObject({ context: Number(SEED.pct), tokens: Number(SEED.tokens), context_at_ms: Number(SEED.at) });
            break;
          case 'model-only':
            expect(g).toEqual(SEED);
            expect(opt(pane, '@agent_model')).toBe(w.model);
            break;
        }
      });
    });
  });
}
