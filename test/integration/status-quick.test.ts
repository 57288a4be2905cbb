// The quick `tma status` (cli/status-fast.ts): while a running collector keeps the server's
// heartbeat fresh, status answers from one tmux call without loading the engine or the manifests,
// and prints exactly what the full path prints for the same stamps, in every format and with a
// `[status]` style. A stale or absent heartbeat takes the full path again. Which files a run
// loaded comes from the module trace (test/support/module-trace.mjs). With the collector's wake
// socket answering, the status reads through the collector and starts no tmux client at all (a
// logging tmux wrapper shows it); a hung or garbled answer falls back to the one tmux call.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { canonicalSocketPath, wakeDir, wakeSocketPath } from '../../collector/fleet/wake.js';
import { REPO, ScratchTmux, tma, waitFor } from '../support/scratch-tmux.js';
import { SCREENS } from '../support/screens.js';

let t: ScratchTmux;
let collector: ChildProcessWithoutNullStreams | null = null;
beforeEach(() => {
  t = new ScratchTmux('quick');
});
afterEach(() => {
  collector?.kill('SIGKILL');
  collector = null;
  t.kill();
});

const BUNDLE = join(REPO, 'dist/bundle/cli');
/** The bundle chunks whose text holds `marker`, e.g. the engine's cycle (a build keeps older builds' chunks a day). */
function chunksWith(marker: string): string[] {
  const hits = readdirSync(BUNDLE).filter((f) => f.endsWith('.js') && readFileSync(join(BUNDLE, f), 'utf8').includes(marker));
  expect(hits.length, marker).toBeGreaterThan(0);
  return hits.map((f) => join(BUNDLE, f));
}
const loadedAny = (files: string[], chunks: string[]) => chunks.some((c) => files.includes(c));

/** Run tma under the module trace: its stdout and the files it loaded. */
async function traced(args: string[], env: Record<string, string>): Promise<{ stdout: string; files: string[] }> {
  const trace = join(t.dir, 'trace');
  writeFileSync(trace, '');
  const r = await tma(args, { env: { ...env, TMA_MODULE_TRACE: trace, NODE_OPTIONS: `--import=${join(REPO, 'test/support/module-trace.mjs')}` } });
  expect(r.code, r.stderr).toBe(0);
  const files = readFileSync(trace, 'utf8')
    .split('\n')
    .filter((u) => u.startsWith('file:'))
    .map((u) => fileURLToPath(u));
  return { stdout: r.stdout, files: [...new Set(files)] };
}

/** Prometheus seconds-in-state move with the clock between two runs. */
const steady = (s: string) => s.replace(/(tma_agent_state_seconds\{[^}]*\}) [0-9.]+/g, '$1 S');

/** A claude stand-in (idle), a codex one (blocked) and a shell, with `toml` as config.toml; the environment of every run. */
async function twoAgents(toml: string) {
  const claude = t.start();
  const codex = t.newPane();
  t.newPane();
  await t.standIn(claude, 'claude', SCREENS.claudeIdle);
  await t.standIn(codex, 'codex', SCREENS.codexBlocked);
  const cfg = join(t.dir, 'cfg');
  mkdirSync(join(cfg, 'tma'), { recursive: true });
  writeFileSync(join(cfg, 'tma', 'config.toml'), toml);
  const env = { XDG_CACHE_HOME: join(t.dir, 'cache'), XDG_CONFIG_HOME: cfg, XDG_RUNTIME_DIR: join(t.dir, 'run'), TMUX: '' };
  return { claude, codex, env, server: ['-L', t.name] };
}

/** The README's main job: a hub with this machine's own collector, following the scratch server. */
function startHub(env: Record<string, string>, server: string[]): ChildProcessWithoutNullStreams {
  const c = spawn(process.execPath, [join(REPO, 'bin/tma.js'), 'hub', '--listen', '127.0.0.1:0', ...server], {
    env: { ...process.env, ...env, TMA_HUB: '', TMA_HUB_TOKEN: '', TMUX_PANE: '' },
  });
  c.stdout.resume();
  c.stderr.resume();
  return c;
}

it('answers from the heartbeat without the engine, byte for byte as the full path, and falls back when it is stale or absent', async () => {
  const { claude, codex, env, server } = await twoAgents('[status]\nidle = { glyph = "I#", color = "colour33" }\nblocked = { glyph = "B" }\n');
  const engine = chunksWith('stores set-option -F formats literally');
  const manifests = chunksWith('function loadAgentManifestsCached(');
  const quick = join(BUNDLE, 'status-fast.cjs');

  // A config.toml is validated once by a full run, as on any machine after the first.
  expect((await tma([...server, 'status'], { env: { ...env, TMA_QUICK_STATUS: '0' } })).code).toBe(0);

  collector = startHub(env, server);
  const heartbeat = () => Number(t.tmux('show-options', '-sqv', '@tma_collector_at').trim()) || 0;
  await waitFor(
    () => Date.now() - heartbeat() < 2000 && t.option(claude, '@agent_state') === 'idle' && t.option(codex, '@agent_state') === 'blocked',
    'collector heartbeat and stamps',
    20_000,
  );

  for (const args of [
    ['status'],
    ...['tmux', 'plain', 'json', 'prom'].map((f) => ['status', '--format', f]),
    ['status', '--state', 'idle,done', '--format', 'plain'],
  ]) {
    // On a loaded machine the heartbeat may run late now and then: such a run rightly takes the
    // full path, so a run is tried again (at most three times) right after a fresh heartbeat.
    let fast = { stdout: '', files: [] as string[] };
    for (let i = 0; i < 3; i++) {
      await waitFor(() => Date.now() - heartbeat() < 1000, 'a fresh heartbeat', 10_000);
      fast = await traced([...server, ...args], env);
      if (!loadedAny(fast.files, engine)) break;
    }
    expect(fast.files, args.join(' ')).toContain(quick);
    expect(loadedAny(fast.files, engine), args.join(' ')).toBe(false);
    expect(loadedAny(fast.files, manifests)).toBe(false);
    const full = await tma([...server, ...args], { env: { ...env, TMA_QUICK_STATUS: '0' } });
    expect(full.code, full.stderr).toBe(0);
    expect(steady(fast.stdout), args.join(' ')).toBe(steady(full.stdout));
  }
  const plain = await tma([...server, 'status', '--format', 'plain'], { env });
  expect(plain.stdout).toBe('B1 I#1\n');

  // The hub and its collector stop: once the heartbeat is older than the window, status looks for itself.
  collector.kill('SIGKILL');
  collector = null;
  t.tmux('set-option', '-s', '@tma_collector_at', String(Date.now() - 10_000));
  const stale = await traced([...server, 'status', '--format', 'plain'], env);
  expect(loadedAny(stale.files, engine)).toBe(true);
  expect(loadedAny(stale.files, manifests)).toBe(true);
  expect(stale.stdout).toBe('B1 I#1\n');

  // The declined quick read is the full path's first read: tmux lists the panes once per run.
  const calls = join(t.dir, 'tmux-calls');
  const counted = join(t.dir, 'tmux-counted');
  writeFileSync(counted, `#!/bin/sh\necho "$*" >> '${calls}'\nexec tmux "$@"\n`, { mode: 0o755 });
  writeFileSync(calls, '');
  expect((await tma([...server, 'status', '--format', 'plain'], { env: { ...env, TMA_TMUX_BIN: counted } })).stdout).toBe('B1 I#1\n');
  expect(
    readFileSync(calls, 'utf8')
      .split('\n')
      .filter((l) => l.includes('list-panes')),
  ).toHaveLength(1);

  t.tmux('set-option', '-s', '-u', '@tma_collector_at');
  const absent = await traced([...server, 'status', '--format', 'plain'], env);
  expect(loadedAny(absent.files, engine)).toBe(true);
  expect(absent.stdout).toBe('B1 I#1\n');
}, 90_000);

it('asks the running collector over its wake socket and spawns no tmux; a hung, garbled or stale collector still gets the right answer', async () => {
  // A 60 s window: the collector renews its heartbeat every 30 s, so the test can age it by hand
  // (the stale case) without the collector writing it back at once.
  const { claude, codex, env, server } = await twoAgents('[fold]\nfreshness_secs = 60\n[status]\nidle = { glyph = "I#" }\n');
  const engine = chunksWith('stores set-option -F formats literally');
  const quick = join(BUNDLE, 'status-fast.cjs');
  const wake = wakeSocketPath(canonicalSocketPath(t.socketPath()), wakeDir(env));
  // Every tmux client a status process starts is logged (the collector runs the real tmux).
  const calls = join(t.dir, 'status-tmux-calls');
  const logged = join(t.dir, 'tmux-logged');
  writeFileSync(logged, `#!/bin/sh\n[ -n "$TMA_TEST_STATUS_RUN" ] && echo "$*" >> '${calls}'\nexec tmux "$@"\n`, { mode: 0o755 });
  const watched = { ...env, TMA_TMUX_BIN: logged, TMA_TEST_STATUS_RUN: '1' };
  const tmuxCalls = () => readFileSync(calls, 'utf8').split('\n').filter(Boolean);
  /** One traced status run: its output, whether it stayed quick, its tmux clients and its wall time. */
  const run = async (args: string[], extra: Record<string, string> = {}) => {
    writeFileSync(calls, '');
    const t0 = Date.now();
    const r = await traced([...server, ...args], { ...watched, ...extra });
    return { stdout: r.stdout, quick: r.files.includes(quick) && !loadedAny(r.files, engine), tmux: tmuxCalls(), ms: Date.now() - t0 };
  };
  expect((await tma([...server, 'status'], { env: { ...env, TMA_QUICK_STATUS: '0' } })).code).toBe(0);

  collector = startHub(env, server);
  const heartbeat = () => Number(t.tmux('show-options', '-sqv', '@tma_collector_at').trim()) || 0;
  const PLAIN = '⚑1 I#1\n';
  await waitFor(
    () => Date.now() - heartbeat() < 30_000 && t.option(claude, '@agent_state') === 'idle' && t.option(codex, '@agent_state') === 'blocked' && existsSync(wake),
    'collector heartbeat, stamps and wake socket',
    20_000,
  );

  // (1) The collector's answer, judged here, prints what the full path prints; no tmux client starts.
  for (const args of [['status'], ['status', '--format', 'json'], ['status', '--format', 'plain']]) {
    // A collector held up by a cycle of its own can miss the 250 ms now and then on a loaded
    // machine (the status then rightly reads tmux itself): tried again, at most three times.
    let fast = await run(args);
    for (let i = 1; i < 3 && fast.tmux.length > 0; i++) fast = await run(args);
    expect(fast.quick, args.join(' ')).toBe(true);
    expect(fast.tmux, args.join(' ')).toEqual([]);
    const full = await run(args, { TMA_QUICK_STATUS: '0' });
    // The log does see a status that reads tmux itself.
    expect(full.tmux.length).toBeGreaterThan(0);
    expect(steady(fast.stdout), args.join(' ')).toBe(steady(full.stdout));
  }
  expect((await run(['status', '--format', 'plain'])).stdout).toBe(PLAIN);
  // The old way, for comparison: one tmux client of its own.
  const viaTmux = await run(['status', '--format', 'plain'], { TMA_QUICK_STATUS: 'tmux' });
  expect([viaTmux.quick, viaTmux.tmux.length, viaTmux.stdout]).toEqual([true, 1, PLAIN]);

  // (3) A heartbeat older than the window: the collector's read declines as a read of our own
  // would, and the full path answers from that read (so this status lists the panes zero times).
  // Tried again (at most three times) when the collector renewed its heartbeat meanwhile or
  // answered late; the old code lists the panes itself on every try.
  let stale = { stdout: '', quick: true, tmux: [] as string[], ms: 0 };
  for (let i = 0; i < 3 && (stale.quick || stale.tmux.some((l) => l.includes('list-panes'))); i++) {
    t.tmux('set-option', '-s', '@tma_collector_at', String(Date.now() - 120_000));
    stale = await run(['status', '--format', 'plain']);
  }
  expect(stale.quick).toBe(false);
  expect(stale.stdout).toBe(PLAIN);
  expect(stale.tmux.filter((l) => l.includes('list-panes'))).toEqual([]);
  t.tmux('set-option', '-s', '@tma_collector_at', String(Date.now()));

  // (2) A hung collector (stopped: its socket still accepts) costs one short wait, then one tmux call.
  collector.kill('SIGSTOP');
  try {
    const hung = await run(['status', '--format', 'plain']);
    expect([hung.quick, hung.tmux.length, hung.stdout]).toEqual([true, 1, PLAIN]);
    expect(hung.ms).toBeLessThan(10_000);
  } finally {
    collector.kill('SIGKILL');
  }
  // A listener that answers garbage (or refuses) is not believed either.
  await waitFor(() => collector!.exitCode !== null || collector!.signalCode !== null, 'collector gone');
  collector = null;
  rmSync(wake, { force: true });
  for (const answer of ['garbage\n', '{"schema":1,"outs":["x","y"]}\n', '\u0015']) {
    const fake = createServer((s) => s.once('data', () => s.end(answer)));
    await new Promise<void>((r) => fake.listen(wake, r));
    try {
      t.tmux('set-option', '-s', '@tma_collector_at', String(Date.now()));
      const garbled = await run(['status', '--format', 'plain']);
      expect([garbled.quick, garbled.tmux.length, garbled.stdout], JSON.stringify(answer)).toEqual([true, 1, PLAIN]);
    } finally {
      await new Promise((r) => fake.close(r));
    }
  }
}, 90_000);
