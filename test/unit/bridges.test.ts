// Our OpenCode and pi bridges, run by node against a fake plugin host: the hook calls each makes
// for its pane land in the order the agent sent the events, and the OpenCode bridge's reply route
// answers each permission request at most once through the in-process client OpenCode hands plugins;
// the pi bridge, fed the events real pi fires for a turn, leaves the claims that turn means.

import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mapEvent } from '../../collector/core/hook-event.js';
import { loadManifestSet } from '../../collector/core/manifest-load.js';
import { bundledManifestDir, readManifestFiles } from '../../collector/manifest-files.js';

const set = loadManifestSet(readManifestFiles(bundledManifestDir()), []);
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

  it('serves the pending list tma reads to see a reply landed: asked requests, gone once replied', async () => {
    const client = fakeClient();
    const hooks = await loadBridge(client);
    const ep = await endpointOf();
    const list = async () => ((await (await fetch(`${ep}/permission`)).json()) as { id: string }[]).map((r) => r.id);
    expect(await list()).toEqual([]);
    await hooks.event(asked('per_3', 'bash'));
    await hooks.event(asked('per_4', 'bash'));
    expect(await list()).toEqual(['per_3', 'per_4']);
    expect((await post(`${ep}/permission/per_3/reply`)).status).toBe(200);
    expect(await list()).toEqual(['per_4']);
    // The list is behind the same secret path as the reply.
    expect((await fetch(`${ep.replace(/[0-9a-f]{32}$/, 'f'.repeat(32))}/permission`)).status).toBe(404);
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

type PiHandler = (e: unknown, ctx: unknown) => Promise<void>;

/** Our pi extension loaded the way pi loads it, in a pane, with `hook` (a shell script) as tma-hook. */
async function loadPiBridge(hookBody: string): Promise<Map<string, PiHandler>> {
  const src = readFileSync(new URL('../../bridges/pi-extension.js', import.meta.url), 'utf8');
  const hook = join(dir, 'pi-hook.sh');
  writeFileSync(hook, `#!/bin/sh\np=$(cat)\n${hookBody}\n`);
  chmodSync(hook, 0o755);
  const file = join(dir, `pi-${n++}.mjs`);
  writeFileSync(file, src.replaceAll('@@TMA_HOOK@@', hook));
  const handlers = new Map<string, PiHandler>();
  const mod = (await import(pathToFileURL(file).href)) as { default(pi: unknown): void };
  const before = process.env.TMUX_PANE;
  process.env.TMUX_PANE = '%9';
  try {
    mod.default({ on: (name: string, h: PiHandler) => handlers.set(name, h) });
  } finally {
    if (before === undefined) delete process.env.TMUX_PANE;
    else process.env.TMUX_PANE = before;
  }
  return handlers;
}

describe('pi bridge: hook order', () => {
  it('a turn that settles at once still reaches the hook after its start', async () => {
    // The start takes longer than the end, as a slow process start would.
    const handlers = await loadPiBridge(`case "$2" in before_agent_start) sleep 0.4;; esac\necho "$2" >> ${join(dir, 'hook.log')}`);
    await handlers.get('before_agent_start')!({}, {});
    await handlers.get('agent_settled')!({}, {});
    expect(await hookLines(3)).toEqual(['before_agent_start', 'agent_settled', 'context']);
  });
});

// What pi fires for a prompt whose answer runs one tool, in order (its extension docs' lifecycle).
// pi 0.73 ends a run with agent_end and has no agent_settled; pi 1.x adds agent_settled once it
// will not go on by itself (a retry, a compaction or queued messages start another run first).
const TOOL_TURN = ['turn_start', 'tool_execution_start', 'tool_execution_end', 'turn_end', 'turn_start', 'turn_end'];
const PI_0_73 = ['session_start', 'input', 'before_agent_start', 'agent_start', ...TOOL_TURN, 'agent_end'];
const PI_1_X = [...PI_0_73, 'agent_before_settle', 'agent_settled'];
// pi 0.73 retrying after a failed run: agent_end, then a run of its own, with no new prompt.
const PI_0_73_RETRY = ['session_start', 'before_agent_start', 'agent_start', 'turn_start', 'turn_end', 'agent_end', 'agent_start', ...TOOL_TURN, 'agent_end'];

describe('pi bridge: the claims a real turn leaves', () => {
  const pi = set.manifests.find((m) => m.name === 'pi')!;

  /** Fire `events` as pi does (to whoever subscribed), then the state claims tma-hook was handed, in order. */
  async function claims(events: string[], cut = events.length): Promise<string[]> {
    const handlers = await loadPiBridge(`echo "$2" >> ${join(dir, 'hook.log')}`);
    for (const e of events.slice(0, cut)) await handlers.get(e)?.({ type: e }, {});
    // session_shutdown is always forwarded, last: once it is logged, every call before it is.
    await handlers.get('session_shutdown')!({ type: 'session_shutdown' }, {});
    const log = join(dir, 'hook.log');
    const deadline = Date.now() + 10_000;
    while (!(existsSync(log) && readFileSync(log, 'utf8').includes('session_shutdown')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return (await hookLines(0))
      .map((kind) => mapEvent(pi, kind, '{}'))
      .flatMap((m) => (m.kind === 'state' ? [`${m.state}${m.turnEnd ? ' turn_end' : ''}`] : []));
  }

  it('pi 0.73: the run ending leaves idle at a turn end, not the working of its start', async () => {
    const got = await claims(PI_0_73);
    expect(got[0]).toBe('working');
    expect(got.at(-1)).toBe('idle turn_end');
  });

  it('pi 1.x: the settled run leaves idle at a turn end', async () => {
    expect((await claims(PI_1_X)).at(-1)).toBe('idle turn_end');
  });

  it('pi 0.73: a retry after agent_end claims working again, and its own end idle', async () => {
    const retryStarts = PI_0_73_RETRY.indexOf('agent_start', PI_0_73_RETRY.indexOf('agent_end'));
    expect((await claims(PI_0_73_RETRY, retryStarts + 1)).at(-1)).toBe('working');
    rmSync(join(dir, 'hook.log'), { force: true });
    expect((await claims(PI_0_73_RETRY)).at(-1)).toBe('idle turn_end');
  });
});
