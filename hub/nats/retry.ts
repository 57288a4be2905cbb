// JetStream right after a cluster forms, or while it elects a stream's leader after a node died,
// refuses or times out requests for a moment ("no suitable peers", a request timeout). What a hub
// needs at start (buckets, the notification stream, its followers) is asked again with backoff
// until a deadline, and only then is it the hub's failure to start.

export async function withBackoff<T>(what: string, fn: () => Promise<T>, untilMs: number): Promise<T> {
  let wait = 100;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() + wait > untilMs) throw new Error(`${what}: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 2000);
    }
  }
}
