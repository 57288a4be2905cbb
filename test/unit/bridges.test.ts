// Our OpenCode and pi bridges, run by node against a fake plugin host: the hook calls each makes
// for its pane land in the order the agent sent the events, and the OpenCode bridge's reply route
// answers each permission request at most once through the in-process client OpenCode hands plugins.

import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const BRIDGE = readFileSync(new URL('../../bridges/opencode-plugin.js', import.meta.url), 'utf8');

let dir = '';
let n = 0;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tma-oc-bridge-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A hook that logs its token and payload; a `replied` takes longer, as a slow process would. */
function hookScript(): string {
  const path = join(dir, 'hook.sh');
  writeFileSync(path, `#!/bin/sh\np=$(cat)\ncase "$2" in permission-replied) sleep 0.4;; esac\necho "$2 $p" >> ${join(dir, 'hook.log')}\n`);
  chmodSync(path, 0o755);
  return path;
}

type Call = { path: { id: string; permissionID: string }; body: { response: string } };
function fakeClient(status = 200): { calls: Call[]; postSessionIdPermissionsPermissionId(c: Call): Promise<unknown> } {
  const calls: Call[] = [];
  return {
    calls,
    async postSessionIdPermissionsPermissionId(c: Call) {
      calls.push(c);
      await new Promise((r) => setTimeout(r, 50));
      return { data: status === 200, response: { status } };
    },
  };
}

type Hooks = { event(e: { event: unknown }): Promise<void> };
async function loadBridge(client: unknown): Promise<Hooks> {
  const file = join(dir, `tma-${n++}.mjs`);
  writeFileSync(file, BRIDGE.replaceAll('@@TMA_HOOK@@', hookScript()));
  const mod = (await import(pathToFileURL(file).href)) as { TmaBridge(input: unknown): Promise<Hooks> };
  // What OpenCode 1.18 hands a plugin when started without --port: a URL nobody serves.
  return mod.TmaBridge({ client, serverUrl: new URL('http://localhost:4096'), directory: dir, worktree: dir });
}

async function hookLines(count: number): Promise<string[]> {
  const log = join(dir, 'hook.log');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lines = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
    if (lines.length >= count || Date.now() > deadline) return lines;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const asked = (id: string, permission: string, patterns: string[] = []) => ({
  event: { type: 'permission.asked', properties: { id, sessionID: 'ses_1', permission, patterns } },
});
const replied = (id: string) => ({ event: { type: 'permission.replied', properties: { sessionID: 'ses_1', requestID: id, reply: 'once' } } });

describe('OpenCode bridge: hook order', () => {
  it('a replied for request 1 lands before the asked of request 2, and names its request', async () => {
    const hooks = await loadBridge(fakeClient());
    await hooks.event(asked('per_1', 'external_directory'));
    await hooks.event(replied('per_1'));
    await hooks.event(asked('per_2', 'bash', ['touch /srv/exports/marker']));
    const lines = await hookLines(4);
    const kinds = lines.map((l) => l.split(' ')[0]);
    expect(kinds).toEqual(['session-start', 'permission-required', 'permission-replied', 'permission-required']);
    expect(JSON.parse(lines[2]!.slice('permission-replied '.length))).toMatchObject({ request_id: 'per_1' });
    expect(JSON.parse(lines[3]!.slice('permission-required '.length))).toMatchObject({
      request_id: 'per_2',
      permission: 'bash',
      // What is asked rides with the hook, so pending_summary needs no look at the screen.
      tool_name: 'bash',
      tool_input: { pattern: ['touch /srv/exports/marker'] },
    });
  });
});

describe('OpenCode bridge: the reply route', () => {
  async function endpointOf(): Promise<string> {
    const first = (await hookLines(1))[0]!;
    return (JSON.parse(first.slice('session-start '.length)) as { api_endpoint: string }).api_endpoint;
  }
  const post = (url: string, reply = 'once') =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reply }) });

  it('announces a loopback endpoint that answers through the in-process client, once per request', async () => {
    const client = fakeClient();
    const hooks = await loadBridge(client);
    const ep = await endpointOf();
    expect(ep).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}$/);
    await hooks.event(asked('per_7', 'bash'));
    // Ten replies at once for the same request: OpenCode hears exactly one.
    const results = await Promise.all(Array.from({ length: 10 }, () => post(`${ep}/permission/per_7/reply`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array<number>(9).fill(404)]);
    expect(client.calls).toEqual([{ path: { id: 'ses_1', permissionID: 'per_7' }, body: { response: 'once' } }]);
    // Answered at the terminal: a later reply is told the request is gone.
    await hooks.event(asked('per_8', 'bash'));
    await hooks.event(replied('per_8'));
    expect((await post(`${ep}/permission/per_8/reply`, 'reject')).status).toBe(404);
    expect(client.calls).toHaveLength(1);
  });

  it('an unknown request, a wrong path or a bad reply reaches nothing', async () => {
    const client = fakeClient();
    const hooks = await loadBridge(client);
    const ep = await endpointOf();
    await hooks.event(asked('per_9', 'bash'));
    expect((await post(`${ep}/permission/per_nope/reply`)).status).toBe(404);
    expect((await post(`${ep.replace(/[0-9a-f]{32}$/, 'f'.repeat(32))}/permission/per_9/reply`)).status).toBe(404);
    expect((await post(`${ep}/permission/per_9/reply`, 'yes please')).status).toBe(400);
    expect(client.calls).toHaveLength(0);
  });

  it('a refusal from OpenCode is an error, not a reply', async () => {
    const client = fakeClient(500);
    const hooks = await loadBridge(client);
    const ep = await endpointOf();
    await hooks.event(asked('per_5', 'bash'));
    expect((await post(`${ep}/permission/per_5/reply`)).status).toBe(502);
    expect(client.calls).toHaveLength(1);
  });
});

describe('pi bridge: hook order', () => {
  it('a turn that settles at once still reaches the hook after its start', async () => {
    const src = readFileSync(new URL('../../bridges/pi-extension.js', import.meta.url), 'utf8');
    const hook = join(dir, 'pi-hook.sh');
    // The start takes longer than the end, as a slow process start would.
    writeFileSync(hook, `#!/bin/sh\np=$(cat)\ncase "$2" in before_agent_start) sleep 0.4;; esac\necho "$2" >> ${join(dir, 'hook.log')}\n`);
    chmodSync(hook, 0o755);
    const file = join(dir, `pi-${n++}.mjs`);
    writeFileSync(file, src.replaceAll('@@TMA_HOOK@@', hook));
    const handlers = new Map<string, (e: unknown, ctx: unknown) => Promise<void>>();
    const mod = (await import(pathToFileURL(file).href)) as { default(pi: unknown): void };
    const before = process.env.TMUX_PANE;
    process.env.TMUX_PANE = '%9';
    try {
      mod.default({ on: (name: string, h: (e: unknown, ctx: unknown) => Promise<void>) => handlers.set(name, h) });
    } finally {
      if (before === undefined) delete process.env.TMUX_PANE;
      else process.env.TMUX_PANE = before;
    }
    await handlers.get('before_agent_start')!({}, {});
    await handlers.get('agent_settled')!({}, {});
    expect(await hookLines(3)).toEqual(['before_agent_start', 'agent_settled', 'context']);
  });
});
