// `tma doctor` says, per agent pane, whether an approve can reach it and why not: an agent whose
// approve action has no keys, or an OpenCode whose endpoint nothing listens on (as with the
// placeholder an older plugin reported). An OpenCode with no endpoint at all is reached by keys.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { ScratchTmux, tma } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
let api: Server;

beforeEach(async () => {
  t = new ScratchTmux('docapp');
  api = createServer((_req, res) => res.writeHead(404).end());
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
});
afterEach(async () => {
  t.kill();
  await new Promise((r) => api.close(r));
});

type Entry = {
  pane: string;
  agent: string;
  endpoint_ok: boolean | null;
  approve_reachable: boolean;
  approve_reason: string | null;
  answer_lane?: string | null;
};

it('names, per pane, whether approve can reach it and why not', async () => {
  const claude = t.start();
  await t.standIn(claude, 'claude', SCREENS.claudeBlocked);
  const pi = t.newPane();
  await t.standIn(pi, 'pi', SCREENS.piIdle);
  const opencode = async (endpoint: string | null): Promise<string> => {
    const pane = t.newPane();
    await t.standIn(pane, 'opencode', SCREENS.opencodeBlocked);
    if (endpoint !== null) {
      await tma(['-L', t.name, 'event', '--agent', 'opencode', '--kind', 'session-start', '--payload', '-'], {
        env: { TMUX_PANE: pane },
        input: JSON.stringify({ session_id: 'ses_1', api_endpoint: endpoint }),
      });
    }
    return pane;
  };
  const live = await opencode(`http://127.0.0.1:${(api.address() as AddressInfo).port}/secret`);
  const deaf = await opencode(`http://127.0.0.1:${await freePort()}`);
  const silent = await opencode(null);

  const r = await tma(['-L', t.name, 'doctor', '--json']);
  expect(r.code).toBe(0);
  const by = new Map((JSON.parse(r.stdout) as { agents: Entry[] }).agents.map((a) => [a.pane, a]));
  expect(by.get(claude)).toMatchObject({ agent: 'claude', approve_reachable: true, approve_reason: null, endpoint_ok: null });
  expect(by.get(pi)).toMatchObject({ agent: 'pi', approve_reachable: false, approve_reason: 'the approve action has no keys for pi' });
  expect(by.get(live)).toMatchObject({ agent: 'opencode', approve_reachable: true, endpoint_ok: true, approve_reason: null });
  expect(by.get(deaf)).toMatchObject({ approve_reachable: false, endpoint_ok: false });
  expect(by.get(deaf)!.approve_reason).toMatch(/^nothing listens at the API endpoint 127\.0\.0\.1:\d+ /);
  // No plugin, no endpoint: the approve types OpenCode's keys, as `tma act approve` does.
  expect(by.get(silent)).toMatchObject({ approve_reachable: true, endpoint_ok: null, approve_reason: null });
  // The endpoint's secret path is never printed.
  expect(r.stdout).not.toContain('/secret');
  // The lane each pane answers through: keys, the API, or (while one waits) the agent's hook.
  expect(by.get(claude)).toMatchObject({ answer_lane: 'keys' });
  expect(by.get(live)).toMatchObject({ answer_lane: 'api' });
  expect(by.get(silent)).toMatchObject({ answer_lane: 'keys' });
  expect(by.get(pi)).toMatchObject({ answer_lane: null });
  t.tmux('set-option', '-p', '-t', claude, '@tma_hook_request', 'hook-0123456789abcdef');
  const waiting = JSON.parse((await tma(['-L', t.name, 'doctor', '--json'])).stdout) as { agents: Entry[] };
  expect(waiting.agents.find((a) => a.pane === claude)).toMatchObject({ answer_lane: 'hook' });
  t.tmux('set-option', '-p', '-u', '-t', claude, '@tma_hook_request');

  const text = (await tma(['-L', t.name, 'doctor'])).stdout;
  expect(text).toMatch(new RegExp(`${claude} \\S+ claude: .*; approve can reach it; lane keys\\n`));
  expect(text).toMatch(new RegExp(`${pi} \\S+ pi: .*; approve cannot: the approve action has no keys for pi\\n`));
});
