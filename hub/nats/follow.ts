// Following a bucket: list-then-watch. A watch delivers the last value of every key, then every
// change after it, from one ordered consumer; `ready` resolves once the listing has been applied,
// so a hub serves nothing before it holds the whole fleet. The consumer is ordered: after a lost
// connection it resumes from the revision after the last one delivered, so changes made
// meanwhile arrive in order, with nothing skipped (a bucket keeps one value per key, so a
// resumed watch only passes over values already overwritten by ones it will deliver).

import type { KV, KvEntry } from '@nats-io/kv';
import type { Logger } from 'pino';

export interface Followed {
  /** A key changed (or was listed); `value` is null when it was deleted. */
  onEntry(key: string, value: Uint8Array | null, revision: number): void;
}

export interface Following {
  ready: Promise<void>;
  /** The last revision applied. */
  revision(): number;
  stop(): void;
}

const LIST_TIMEOUT_MS = 30_000;

export async function follow(kv: KV, sink: Followed, logger: Logger, what: string): Promise<Following> {
  let revision = 0;
  let stopped = false;
  let markReady!: () => void;
  let failReady!: (e: Error) => void;
  const ready = new Promise<void>((ok, fail) => {
    markReady = ok;
    failReady = fail;
  });
  const status = await kv.status();
  const iter = await kv.watch({ key: '>' });
  let listed = status.values === 0;
  if (listed) markReady();
  const timer = setTimeout(() => failReady(new Error(`${what}: listing did not complete within ${LIST_TIMEOUT_MS} ms`)), LIST_TIMEOUT_MS);
  timer.unref();
  void (async () => {
    try {
      for await (const e of iter) {
        apply(e);
        if (!listed && (e.delta === 0 || e.isUpdate)) {
          listed = true;
          clearTimeout(timer);
          markReady();
        }
      }
    } catch (err) {
      if (!stopped) logger.error({ err: (err as Error).message, bucket: what }, 'NATS watch ended');
    }
  })();
  if (listed) clearTimeout(timer);

  function apply(e: KvEntry): void {
    revision = Math.max(revision, e.revision);
    try {
      sink.onEntry(e.key, e.operation === 'PUT' ? e.value : null, e.revision);
    } catch (err) {
      // A value no hub of this version can read must not stop the watch: that key is skipped.
      logger.warn({ err: (err as Error).message, bucket: what, key: e.key }, 'NATS entry not applied');
    }
  }

  return {
    ready,
    revision: () => revision,
    stop() {
      stopped = true;
      clearTimeout(timer);
      iter.stop();
    },
  };
}
