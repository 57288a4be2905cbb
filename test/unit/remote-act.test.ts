import { describe, expect, test } from 'vitest';
import type { FireOptions } from '../../collector/act/broker.js';
import { parseActionManifest, type ActionManifest } from '../../collector/core/action-manifest.js';
import type { Engine } from '../../collector/engine/cycle.js';
import { remoteActHandler, remoteAllowed, remoteRefusal, type RemoteActDeps, type RemotePolicy } from '../../collector/fleet/remote-act.js';
import type { ActRequest } from '../../collector/fleet/publisher.js';

function action(name: string, body: string): ActionManifest {
  return parseActionManifest({ path: `/x/${name}.toml`, text: `min_engine_version = "0.4.0"\nname = "${name}"\nlabel = "L"\n${body}` });
}

const approve = action('approve', 'kind = "keys"\n[when]\nstate = ["blocked"]\n[keys]\nclaude = ["1"]\n');
const deny = action('deny', 'kind = "keys"\n[keys]\nclaude = ["Escape"]\n');
const careful = action('careful', 'kind = "keys"\nconfirm = true\n[keys]\nclaude = ["y"]\n');
const shout = action('shout', 'kind = "exec"\ncommand = "true"\n');
const SET = [approve, deny, careful, shout];

const unset: RemotePolicy = { allowActions: null, allowExec: false };

describe('remote policy', () => {
  test('unset: every keys action, no exec, no confirm action', () => {
    expect(remoteAllowed(SET, unset)).toEqual(['approve', 'deny']);
  });

  test('a list narrows the keys actions to the listed ones', () => {
    expect(remoteAllowed(SET, { allowActions: ['deny'], allowExec: false })).toEqual(['deny']);
    expect(remoteAllowed(SET, { allowActions: [], allowExec: false })).toEqual([]);
  });

  test('exec needs both allow_exec and a listing; either alone is not enough', () => {
    expect(remoteAllowed(SET, { allowActions: ['shout'], allowExec: false })).toEqual([]);
    expect(remoteAllowed(SET, { allowActions: null, allowExec: true })).toEqual(['approve', 'deny']);
    expect(remoteAllowed(SET, { allowActions: ['approve', 'shout'], allowExec: true })).toEqual(['approve', 'shout']);
  });

  test('a confirm action is never allowed, even listed; an unknown name is refused', () => {
    expect(remoteRefusal(careful, { allowActions: ['careful'], allowExec: true })).toMatch(/confirmation/);
    expect(remoteRefusal(undefined, unset)).toMatch(/no such action/);
  });
});

const SERVER = '/tmp/tmux-1000/default';
const request = (over: Partial<ActRequest> = {}): ActRequest => ({
  type: 'act',
  id: 'r1',
  action: 'approve',
  server: SERVER,
  pane: '%2',
  expect_episode_ms: 1_700_000_000_000,
  expect_permission_request: null,
  slot: 'abc',
  principal: 'olga',
  deadline_ms: 0,
  ...over,
});

function harness(over: Partial<RemoteActDeps> = {}) {
  const fired: FireOptions[] = [];
  const log: string[] = [];
  const engine = { runner: { tag: 'runner' } } as unknown as Engine;
  const deps: RemoteActDeps = {
    host: 'build1',
    policy: unset,
    loadActions: () => SET,
    engineFor: (s) => (s === SERVER ? engine : null),
    apiBase: { opencode: 'http://127.0.0.1:9' },
    freshnessMs: 3000,
    env: { XDG_STATE_HOME: '/state' },
    configPath: '/cfg/config.toml',
    log: (l) => log.push(l),
    fire: async (o) => {
      fired.push(o);
      return { action: o.action.name, pane: o.pane, outcome: 'sent', exit_code: 0, reason: null, cached: false };
    },
    ...over,
  };
  return { handle: remoteActHandler(deps), fired, log, engine };
}

describe('remoteActHandler', () => {
  test('runs the broker with the binders, a namespaced slot, no force and no implied yes', async () => {
    const h = harness();
    const r = await h.handle(request({ expect_permission_request: 'req-9' }));
    expect(r).toEqual({ schema: 1, action: 'approve', pane: '%2', outcome: 'sent', exit_code: 0, reason: null, cached: false, host: 'build1', server: SERVER });
    expect(h.fired).toHaveLength(1);
    const o = h.fired[0]!;
    expect(o.slot).toBe('hub:abc');
    expect(o.binders).toEqual({ expectEpisodeMs: 1_700_000_000_000, expectPermissionRequest: 'req-9', expectPrompt: null });
    expect(o).toMatchObject({ force: false, yes: false, args: [], stdio: 'ignore', pane: '%2', freshnessMs: 3000 });
    expect(o.engine).toBe(h.engine);
    expect(o.runner).toBe(h.engine.runner);
    expect(o.serverFlags).toEqual(['--socket-path', SERVER, '--config', '/cfg/config.toml']);
    expect(o.env).toEqual({ XDG_STATE_HOME: '/state' });
  });

  test('an action the host does not allow is refused without firing', async () => {
    const h = harness();
    for (const name of ['shout', 'careful', 'nope']) {
      expect(await h.handle(request({ action: name }))).toMatchObject({ outcome: 'refused', reason: 'not-allowed', exit_code: 4, host: 'build1' });
    }
    expect(h.fired).toHaveLength(0);
  });

  test('a listed exec action with allow_exec fires', async () => {
    const h = harness({ policy: { allowActions: ['shout'], allowExec: true } });
    expect(await h.handle(request({ action: 'shout' }))).toMatchObject({ outcome: 'sent' });
    expect(h.fired.map((o) => o.action.name)).toEqual(['shout']);
  });

  test('a server this collector does not follow: vanished, nothing fired', async () => {
    const h = harness();
    expect(await h.handle(request({ server: '/tmp/tmux-1000/other' }))).toMatchObject({ outcome: 'vanished', reason: 'pane-gone', exit_code: 3 });
    expect(h.fired).toHaveLength(0);
  });

  test('a broken action set is an error, nothing fired', async () => {
    const h = harness({ loadActions: () => 'bad.toml: unknown key' });
    expect(await h.handle(request())).toMatchObject({ outcome: 'error', exit_code: 1 });
    expect(h.fired).toHaveLength(0);
  });

  test('every request leaves one audit line: who, where, what, binders, outcome', async () => {
    const h = harness();
    await h.handle(request());
    await h.handle(request({ action: 'shout' }));
    expect(h.log).toHaveLength(2);
    const [ok, refused] = h.log.map((l) => JSON.parse(l.slice(l.indexOf('{'))) as Record<string, unknown>);
    expect(ok).toEqual({
      who: 'olga',
      host: 'build1',
      server: SERVER,
      pane: '%2',
      action: 'approve',
      expect_episode_ms: 1_700_000_000_000,
      expect_permission_request: null,
      expect_prompt: null,
      slot: 'abc',
      outcome: 'sent',
      reason: null,
      exit_code: 0,
      cached: false,
    });
    expect(refused).toMatchObject({ action: 'shout', outcome: 'refused', reason: 'not-allowed', why: expect.stringMatching(/exec/) });
  });
});
