// KV puts as plain publishes with a reply subject, their JetStream acks gathered on one inbox
// subscription. The client's request path builds two Error objects per request even when it
// succeeds (a "cancelled" RequestError on every resolve, plus a stack-trace context unless traces
// are off), and a timer each: issue 32's profile put 5–11% of a loaded hub there. Here a write
// costs one publish and one promise; one sweep a quarter second fails the writes unanswered past
// the timeout, and only those make an Error.

import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';

const SWEEP_MS = 250;

interface Pending {
  resolve: (seq: number) => void;
  reject: (e: Error) => void;
  at: number;
}

export class AckedPublisher {
  private readonly pending = new Map<number, Pending>();
  private readonly prefix: string;
  private readonly sub: Subscription;
  private readonly timer: NodeJS.Timeout;
  private next = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs = 5000,
  ) {
    // Under the connection's own inbox prefix: a server may let this hub subscribe to no other.
    this.prefix = `${createInbox((nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix)}.`;
    this.sub = nc.subscribe(`${this.prefix}*`, { callback: (_err, m) => this.reply(m) });
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  /** Publish `data` to a stream's subject; resolves with its sequence once JetStream acks it. */
  publish(subject: string, data: string): Promise<number> {
    const id = ++this.next;
    return new Promise<number>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, at: Date.now() });
      try {
        this.nc.publish(subject, data, { reply: this.prefix + id });
      } catch (e) {
        this.pending.delete(id);
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  }

  /** Writes sent and not yet acked. */
  get inFlight(): number {
    return this.pending.size;
  }

  private reply(m: Msg): void {
    const id = Number(m.subject.slice(this.prefix.length));
    const p = this.pending.get(id);
    if (!p) return; // acked after its sweep: it was already failed as a timeout
    this.pending.delete(id);
    // No JetStream behind the subject answers with a 503 status and no body.
    if (m.data.length === 0) return p.reject(new Error(`no JetStream ack (${m.headers?.code ?? 'empty reply'})`));
    let ack: { seq?: number; error?: { description?: string } };
    try {
      ack = m.json();
    } catch {
      return p.reject(new Error('unreadable JetStream ack'));
    }
    if (ack.error || typeof ack.seq !== 'number') p.reject(new Error(ack.error?.description ?? 'JetStream ack without a sequence'));
    else p.resolve(ack.seq);
  }

  private sweep(): void {
    const old = Date.now() - this.timeoutMs;
    for (const [id, p] of this.pending) {
      // Insertion order is send order: the first one young enough ends the sweep.
      if (p.at > old) break;
      this.pending.delete(id);
      p.reject(new Error(`TIMEOUT: no JetStream ack within ${this.timeoutMs} ms (the write may still have landed)`));
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.sub.unsubscribe();
    for (const p of this.pending.values()) p.reject(new Error('closed'));
    this.pending.clear();
  }
}
