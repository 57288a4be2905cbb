// OpenCode's permission prompts are answered over its own HTTP API, not by typing: the endpoint
// and the request id arrive through its plugin's hook events. A real HTTP server on loopback
// stands in for OpenCode's API: `GET /permission` lists what is pending, a reply takes its request
// off that list (unless the test says the reply does not land, as a 200 for an unknown id).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
let api: Server;
let status = 200;
/** What `GET /permission` lists, and whether a 2xx reply takes its request off the list. */
let pending: string[] = [];
let replyLands = true;
let listReads = 0;
const received: { method: string; url: string; body: string }[] = [];
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  t = new ScratchTmux('api');
  writeFileSync(join(t.dir, 'config.toml'), '[fold]\nfreshness_secs = 0\n');
  mkdirSync(join(t.dir, 'state'));
  env = { TMA_CONFIG: join(t.dir, 'config.toml'), XDG_STATE_HOME: join(t.dir, 'state') };
  received.length = 0;
  status = 200;
  pending = [];
  replyLands = true;
  listReads = 0;
  api = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/permission') {
        listReads++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(pending.map((id) => ({ id, sessionID: 'ses_1', permission: 'bash' }))));
        return;
      }
      received.push({ method: req.method ?? '', url: req.url ?? '', body });
      const id = /^\/permission\/([^/]+)\/reply$/.exec(req.url ?? '')?.[1];
      if (id && replyLands && status >= 200 && status < 300) pending = pending.filter((p) => p !== id);
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
});
afterEach(async () => {
  t.kill();
  await new Promise((r) => api.close(r));
});

/** An OpenCode stand-in whose plugin registered its API endpoint and raised a permission request. */
async function blockedOpencode(): Promise<string> {
  const pane = t.start();
  await t.standIn(pane, 'opencode', SCREENS.opencodeBlocked);
  const endpoint = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const hook = (kind: string, payload: object) =>
    tma(['-L', t.name, 'event', '--agent', 'opencode', '--kind', kind, '--payload', '-'], { env: { TMUX_PANE: pane }, input: JSON.stringify(payload) });
  await hook('session-start', { session_id: 'ses_1', api_endpoint: endpoint });
  await hook('permission-required', { session_id: 'ses_1', permission: 'bash', request_id: 'per_42' });
  pending = ['per_42'];
  expect(t.option(pane, '@agent_api_endpoint')).toBe(endpoint);
  expect(t.option(pane, '@agent_permission_request')).toBe('per_42');
  expect(t.option(pane, '@agent_state')).toBe('blocked');
  return pane;
}

it('approve posts one reply to the request and reports replied; no key is typed', async () => {
  const pane = await blockedOpencode();
  const r = await tma(['-L', t.name, 'act', 'approve', '--pane', pane, '--json'], { env });
  expect(JSON.parse(r.stdout)).toMatchObject({ action: 'approve', pane, outcome: 'replied', exit_code: 0, reason: null });
  expect(r.code).toBe(0);
  expect(received).toEqual([{ method: 'POST', url: '/permission/per_42/reply', body: '{"reply":"once"}' }]);
});

it('a 200 for a request that stays pending (an id OpenCode does not know) is an error saying so, not replied', async () => {
  const pane = await blockedOpencode();
  replyLands = false;
  const r = await tma(['-L', t.name, 'act', 'approve', '--pane', pane, '--json'], { env });
  expect(JSON.parse(r.stdout)).toMatchObject({ action: 'approve', pane, outcome: 'error' });
  expect(r.stdout + r.stderr).toContain('OpenCode answered HTTP 200 but the answer did not land: request per_42 still pending');
  expect(r.code).not.toBe(0);
  expect(received).toEqual([{ method: 'POST', url: '/permission/per_42/reply', body: '{"reply":"once"}' }]);
  expect(listReads).toBeGreaterThan(1);
});

it('a request OpenCode no longer lists (its server restarted) is an error, and nothing is posted', async () => {
  const pane = await blockedOpencode();
  pending = [];
  const r = await tma(['-L', t.name, 'act', 'approve', '--pane', pane, '--json'], { env });
  expect(JSON.parse(r.stdout)).toMatchObject({ action: 'approve', pane, outcome: 'error' });
  expect(r.stdout + r.stderr).toContain('OpenCode does not list request per_42 as pending');
  expect(received).toEqual([]);
});

it('without the plugin (no endpoint) approve types Enter once; deny types Escape; nothing is posted', async () => {
  const a = await t.standIn(t.start(), 'opencode', SCREENS.opencodeBlocked);
  const r = await tma(['-L', t.name, 'act', 'approve', '--pane', a.pane, '--json'], { env });
  expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'sent', exit_code: 0, reason: null });
  await waitFor(() => a.keys() !== '', 'keys at the stand-in');
  await new Promise((res) => setTimeout(res, 150));
  expect(a.keys()).toBe('\r');
  // The same prompt again: answered already, nothing more is typed.
  const again = await tma(['-L', t.name, 'act', 'approve', '--pane', a.pane, '--json'], { env });
  expect(JSON.parse(again.stdout)).toMatchObject({ outcome: 'refused', reason: 'answered' });
  const b = await t.standIn(t.newPane(), 'opencode', SCREENS.opencodeBlocked);
  expect(JSON.parse((await tma(['-L', t.name, 'act', 'deny', '--pane', b.pane, '--json'], { env })).stdout)).toMatchObject({ outcome: 'sent' });
  await waitFor(() => b.keys() !== '', 'keys at the second stand-in');
  await new Promise((res) => setTimeout(res, 150));
  expect(b.keys()).toBe('\x1b');
  expect(a.keys()).toBe('\r');
  expect(received).toEqual([]);
});

it('deny replies reject; a request the API no longer knows (404) is request-gone', async () => {
  const pane = await blockedOpencode();
  status = 404;
  const r = await tma(['-L', t.name, 'act', 'deny', '--pane', pane, '--json'], { env });
  expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'vanished', reason: 'request-gone', exit_code: 3 });
  expect(received.map((x) => x.body)).toEqual(['{"reply":"reject"}']);
});

it('a reply the agent reported (permission-replied) leaves nothing to approve', async () => {
  const pane = await blockedOpencode();
  await tma(['-L', t.name, 'event', '--agent', 'opencode', '--kind', 'permission-replied', '--payload', '-'], {
    env: { TMUX_PANE: pane },
    input: '{"session_id":"ses_1"}',
  });
  expect(t.option(pane, '@agent_permission_request')).toBe('');
  const r = await tma(['-L', t.name, 'act', 'approve', '--pane', pane, '--json'], { env });
  expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'refused', reason: 'requires-unmet', exit_code: 4 });
  expect(received).toEqual([]);
});

it('two prompts in a row: each has its own prompt_id, and a late reply to the first leaves the second', async () => {
  const pane = t.start();
  // The hooks alone describe the prompts: no blocked rule matches this screen, so nothing on it
  // can tell the two requests apart.
  await t.standIn(pane, 'opencode', SCREENS.opencodeWorking);
  const endpoint = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const hook = (kind: string, payload: object) =>
    tma(['-L', t.name, 'event', '--agent', 'opencode', '--kind', kind, '--payload', '-'], { env: { TMUX_PANE: pane }, input: JSON.stringify(payload) });
  const promptIdNow = async (): Promise<string | null> => {
    const doc = JSON.parse((await tma(['-L', t.name, 'ls', '--json'], { env })).stdout) as {
      agents: { pane: string; state: string; prompt_id?: string | null }[];
    };
    const row = doc.agents.find((x) => x.pane === pane)!;
    expect(row.state).toBe('blocked');
    return row.prompt_id ?? null;
  };
  await hook('session-start', { session_id: 'ses_1', api_endpoint: endpoint });
  await hook('permission-required', { session_id: 'ses_1', permission: 'external_directory', request_id: 'per_1' });
  pending = ['per_1'];
  const first = await promptIdNow();
  expect(first).toMatch(/^[0-9a-f]{16}$/);
  await hook('permission-required', { session_id: 'ses_1', permission: 'bash', request_id: 'per_2' });
  pending = ['per_1', 'per_2'];
  const second = await promptIdNow();
  expect(second).toMatch(/^[0-9a-f]{16}$/);
  expect(second).not.toBe(first);
  // The reply to the first request arrives after the second was asked.
  await hook('permission-replied', { session_id: 'ses_1', request_id: 'per_1' });
  pending = ['per_2'];
  expect(t.option(pane, '@agent_permission_request')).toBe('per_2');
  expect(await promptIdNow()).toBe(second);
  // An approve bound to the first prompt is refused; one bound to the second answers per_2 once.
  const stale = await tma(['-L', t.name, 'act', 'approve', '--pane', pane, '--expect-prompt', first!, '--json'], { env });
  expect(JSON.parse(stale.stdout)).toMatchObject({ outcome: 'refused', reason: 'prompt-changed' });
  const r = await tma(['-L', t.name, 'act', 'approve', '--pane', pane, '--expect-prompt', second!, '--json'], { env });
  expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'replied', exit_code: 0 });
  expect(received).toEqual([{ method: 'POST', url: '/permission/per_2/reply', body: '{"reply":"once"}' }]);
});
