// A real nats-server (Debian's package) with JetStream on 127.0.0.1 for one test file: its own
// temp store dir and free ports. `startNatsCluster(3)` starts three nodes routed to each other,
// so R3 buckets and streams can be tested with a node killed.
//
//   const nats = await startNats();
//   try { … connect to nats.url … } finally { nats.stop(); }

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

export const NATS_SERVER = '/usr/sbin/nats-server';

export interface NatsNode {
  /** `nats://127.0.0.1:PORT` of this node. */
  url: string;
  port: number;
  /** The temp dir holding config, JetStream store and log. */
  dir: string;
  pid(): number | undefined;
  log(): string;
  /** SIGKILL the node; keeps its store, so restart() brings it back with its data. */
  kill(): void;
  restart(): Promise<void>;
  /** kill() and remove the dir. Safe to call twice. */
  stop(): void;
}

export interface NatsCluster {
  nodes: NatsNode[];
  /** Every node's url, comma-joined (what a client given several servers takes). */
  urls: string;
  stop(): void;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

async function waitReady(port: number, proc: ChildProcess, logFile: string): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`nats-server exited ${proc.exitCode}: ${safeRead(logFile)}`);
    if (await accepts(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nats-server did not listen on ${port} within 10 s: ${safeRead(logFile)}`);
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

interface NodePlan {
  name: string;
  port: number;
  clusterPort?: number;
  routes?: number[];
  /** More config lines, given the node's folder (an `include` is relative to it), and the server's environment. */
  extra?: (dir: string) => string[];
  env?: NodeJS.ProcessEnv;
}

function nodeConfig(dir: string, plan: NodePlan): string {
  const lines = [
    `server_name: ${plan.name}`,
    `listen: 127.0.0.1:${plan.port}`,
    `jetstream { store_dir: "${join(dir, 'js')}" }`,
    `log_file: "${join(dir, 'nats.log')}"`,
  ];
  if (plan.clusterPort !== undefined) {
    const routes = (plan.routes ?? []).map((p) => `nats-route://127.0.0.1:${p}`).join(', ');
    lines.push(`cluster { name: tma-test, listen: 127.0.0.1:${plan.clusterPort}, routes: [${routes}] }`);
  }
  lines.push(...(plan.extra?.(dir) ?? []));
  return lines.join('\n') + '\n';
}

function startNode(plan: NodePlan): NatsNode & { ready: Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'tma-nats-'));
  const conf = join(dir, 'nats.conf');
  const logFile = join(dir, 'nats.log');
  writeFileSync(conf, nodeConfig(dir, plan));
  let proc: ChildProcess | undefined;
  let stopped = false;
  const launch = async (): Promise<void> => {
    // stdin 'ignore' and no detach: the server dies with the test process's group on a crash too.
    proc = spawn(NATS_SERVER, ['-c', conf], { stdio: 'ignore', ...(plan.env ? { env: { ...process.env, ...plan.env } } : {}) });
    await waitReady(plan.port, proc, logFile);
  };
  const kill = (): void => {
    if (proc && proc.exitCode === null) proc.kill('SIGKILL');
  };
  const node = {
    url: `nats://127.0.0.1:${plan.port}`,
    port: plan.port,
    dir,
    pid: () => proc?.pid,
    log: () => safeRead(logFile),
    kill,
    restart: async () => {
      kill();
      await new Promise((r) => setTimeout(r, 100));
      await launch();
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      kill();
      rmSync(dir, { recursive: true, force: true });
    },
    ready: Promise.resolve(),
  };
  node.ready = launch();
  return node;
}

/** One JetStream node on a free loopback port; `extra` config lines and `env` for the server. */
export async function startNats(o: { extra?: (dir: string) => string[]; env?: NodeJS.ProcessEnv } = {}): Promise<NatsNode> {
  const node = startNode({ name: 'tma-test-1', port: await freePort(), ...o });
  try {
    await node.ready;
  } catch (err) {
    node.stop();
    throw err;
  }
  return node;
}

/** `size` JetStream nodes routed into one cluster; resolves once JetStream has a meta leader. */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const ports: number[] = [];
  const clusterPorts: number[] = [];
  for (let i = 0; i < size; i++) {
    ports.push(await freePort());
    clusterPorts.push(await freePort());
  }
  const nodes = ports.map((port, i) =>
    startNode({ name: `tma-test-${i + 1}`, port, clusterPort: clusterPorts[i], routes: clusterPorts.filter((_, j) => j !== i) }),
  );
  const stop = (): void => {
    for (const n of nodes) n.stop();
  };
  try {
    await Promise.all(nodes.map((n) => n.ready));
    // JetStream in a cluster answers only once a meta leader is elected; the log says so.
    const until = Date.now() + 15_000;
    while (!nodes.some((n) => /JetStream cluster new metadata leader|Self is new JetStream cluster metadata leader/.test(n.log()))) {
      if (Date.now() > until) throw new Error(`no JetStream meta leader within 15 s:\n${nodes.map((n) => n.log()).join('\n---\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    stop();
    throw err;
  }
  return { nodes, urls: nodes.map((n) => n.url).join(','), stop };
}

/** The fleet secret test hubs on NATS share (`[nats] fleet_key_file`), as bytes and as a file. */
export const TEST_FLEET_KEY = Buffer.from('tma-test-fleet-secret-0123456789abcdef', 'utf8');
let fleetKeyDir: string | null = null;

/** A 0600 file holding TEST_FLEET_KEY, made once per test process and removed as it exits. */
export function testFleetKeyFile(): string {
  if (!fleetKeyDir) {
    const dir = mkdtempSync(join(tmpdir(), 'tma-fleet-key-'));
    fleetKeyDir = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  const file = join(fleetKeyDir, 'fleet.key');
  writeFileSync(file, TEST_FLEET_KEY, { mode: 0o600 });
  return file;
}
