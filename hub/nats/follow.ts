// Following a bucket: list-then-watch. A watch delivers the last value of every key, then every
// change after it; `ready` resolves once the listing has been applied, so a hub serves nothing
// before it holds the whole fleet. When the watch ends or NATS comes back (`restart`), a new
// watch starts from the revision after the last one applied: changes made meanwhile arrive in
// order, with nothing skipped. A bucket keeps one value per key, so a resumed watch only passes
// over values already overwritten by ones it will deliver; deletions stay as markers.

import type { KV, KvEntry, KvWatchEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/transport-node';
import type { Logger } from 'pino';

export interface Followed {
  /** A key changed (or was listed); `value` is null when it was deleted. */
  onEntry(key: string, value: Uint8Array | null, revision: number): void;
}

export interface Following {
  ready: Promise<void>;
  /** The last revision applied. */
  revision(): number;
  /** Start a fresh watch from the last revision (NATS came back; the old one may be dead). */
  restart(): void;
  stop(): void;
}

const LIST_TIMEOUT_MS = 30_000;
const RETRY_MS = 500;
/**
 * How often the watch is checked against the bucket's own last revision. A watch whose consumer
 * sat on a node that died can stay open and silent while the bucket moves on (the client is
 * connected elsewhere, so no reconnect tells it); one found behind twice in a row, with nothing
 * applied between, is restarted from its revision, as a list+watch client relists a stuck watch.
 */
const STALL_CHECK_MS = 2000;

export async function follow(kv: KV, sink: Followed, logger: Logger, what: string): Promise<Following> {
  let revision = 0;
  let stopped = false;
  let current: QueuedIterator<KvWatchEntry> | null = null;
  let generation = 0;
  let markReady!: () => void;
  let failReady!: (e: Error) => void;
  let listed = false;
  const ready = new Promise<void>((ok, fail) => {
    markReady = ok;
    failReady = fail;
  });
  const timer = setTimeout(() => failReady(new Error(`${what}: listing did not complete within ${LIST_TIMEOUT_MS} ms`)), LIST_TIMEOUT_MS);
  timer.unref();
  const done = () => {
    if (listed) return;
    listed = true;
    clearTimeout(timer);
    markReady();
  };

  function apply(e: KvEntry): void {
    if (e.revision <= revision) return;
    revision = e.revision;
    try {
      sink.onEntry(e.key, e.operation === 'PUT' ? e.value : null, e.revision);
    } catch (err) {
      // A value no hub of this version can read must not stop the watch: that key is skipped.
      logger.warn({ err: (err as Error).message, bucket: what, key: e.key }, 'NATS entry not applied');
    }
  }

  async function run(gen: number): Promise<void> {
    while (!stopped && gen === generation) {
      try {
        if (!listed && (await kv.status()).values === 0) done();
        const iter = await kv.watch({ key: '>', ...(revision > 0 ? { resumeFromRevision: revision + 1 } : {}) });
        if (gen !== generation || stopped) {
          iter.stop();
          return;
        }
        current = iter;
        for await (const e of iter) {
          apply(e);
          if (e.delta === 0 || e.isUpdate) done();
        }
      } catch (err) {
        if (!stopped && gen === generation) logger.warn({ err: (err as Error).message, bucket: what }, 'NATS watch failed; resuming from the last revision');
      }
      if (!stopped && gen === generation) await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }

  let behindAt: number | null = null;
  const stallTimer = setInterval(() => {
    if (stopped || !listed) return;
    kv.status().then(
      (st) => {
        const last = st.streamInfo.state.last_seq;
        if (last <= revision) {
          behindAt = null;
          return;
        }
        if (behindAt === revision) {
          logger.warn({ bucket: what, revision, last }, 'NATS watch fell behind its bucket; restarting it from the last revision');
          behindAt = null;
          restart();
        } else behindAt = revision;
      },
      () => undefined,
    );
  }, STALL_CHECK_MS);
  stallTimer.unref();

  function restart(): void {
    generation++;
    current?.stop();
    current = null;
    void run(generation);
  }

  void run(generation);
  return {
    ready,
    revision: () => revision,
    restart,
    stop() {
      stopped = true;
      clearTimeout(timer);
      clearInterval(stallTimer);
      current?.stop();
    },
  };
}
