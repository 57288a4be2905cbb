// Notifications once for the fleet. The hub a collector gave a notification to publishes it to
// the `tma-notify` stream under its id as `Nats-Msg-Id` (a resend to any hub within the window is
// a duplicate the server drops), and acknowledges the collector once the stream has it. Each sink
// is one durable consumer that every hub pulls from: a notification goes to one hub, which runs
// it through that sink's queue (dwell, looking, cooldown, grouping, retries) and acknowledges it
// once the sink's delivery is settled in the outcome bucket (notify-book.ts). A hub that dies
// holding one stops telling the server it is still working on it; after the ack wait it is
// redelivered to another hub, which resumes the message under the delivery id already recorded.

import { AckPolicy, DeliverPolicy, StorageType, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { HubNotification } from '../notify/journal.js';
import type { SharedNotify } from '../notify/hub-notifier.js';
import { blockedIdOf } from '../notify/sink-queue.js';
import type { NotifySinkConfig } from '../notify/sink-config.js';
import { NOTIFY_KEEP_MS } from './connect.js';
import { NOTIFY_STREAM, NOTIFY_SUBJECT, notifyIdToken, sinkConsumer } from './keys.js';
import { NOTIFY_ACK_WAIT_MS, type NatsNotifyBook } from './notify-book.js';
import { withBackoff } from './retry.js';

const NS_PER_MS = 1_000_000;
/** A collector resends what it was not acknowledged for; one come back within this is a repeat. */
const DEDUP_WINDOW_MS = 15 * 60_000;
const NOTIFY_MAX_MSGS = 20_000;
const RETRY_MS = 500;
/** A `resolved` whose blocked another hub still works on waits this long and is offered again. */
const FOLLOW_WAIT_MS = 1000;

/** The stream, made by the first hub and found by the rest. */
export async function ensureNotifyStream(jsm: JetStreamManager, replicas: number): Promise<void> {
  const add = () =>
    jsm.streams.add({
      name: NOTIFY_STREAM,
      subjects: [NOTIFY_SUBJECT],
      storage: StorageType.File,
      num_replicas: replicas,
      max_age: NOTIFY_KEEP_MS * NS_PER_MS,
      max_msgs: NOTIFY_MAX_MSGS,
      duplicate_window: DEDUP_WINDOW_MS * NS_PER_MS,
    });
  const addOrFind = async () => {
    try {
      await add();
    } catch (e) {
      // Made already (by another hub, or with other limits by another version): use it as it is.
      const made = await jsm.streams.info(NOTIFY_STREAM).then(
        () => true,
        () => false,
      );
      if (!made) throw e;
    }
  };
  await withBackoff(`stream ${NOTIFY_STREAM}`, addOrFind, Date.now() + 30_000);
}

/** What the consumers need of the notifier: whether a sink wants a notification, and handing it over. */
export interface NotifyTaker {
  wants(sink: NotifySinkConfig, n: HubNotification): boolean;
  take(sink: string, n: HubNotification, delivery: string | null): boolean;
}

export class NotifyConsumers implements SharedNotify {
  private generation = 0;
  private closed = false;
  private readonly running = new Set<ConsumerMessages>();
  taker: NotifyTaker | null = null;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly book: NatsNotifyBook,
    private readonly log: Logger,
  ) {}

  async publish(n: HubNotification): Promise<boolean> {
    const pa = await this.js.publish(NOTIFY_SUBJECT, JSON.stringify(n), { msgID: notifyIdToken(n.id) });
    // Known here at once, so a resend on this hub is a repeat before the stream's copy comes back.
    if (!pa.duplicate) this.book.accepted(n, pa.seq);
    return !pa.duplicate;
  }

  sinks(sinks: NotifySinkConfig[]): void {
    const gen = ++this.generation;
    this.book.sinks = sinks;
    for (const m of this.running) void m.close();
    this.running.clear();
    // What this hub held for the old queues goes back, to be taken (here or elsewhere) by the new.
    this.book.release();
    if (this.closed) return;
    for (const s of sinks) void this.run(s, gen);
  }

  close(): void {
    this.closed = true;
    this.generation++;
    for (const m of this.running) void m.close();
    this.running.clear();
  }

  private live(gen: number): boolean {
    return !this.closed && gen === this.generation;
  }

  private async run(sink: NotifySinkConfig, gen: number): Promise<void> {
    const durable = sinkConsumer(sink.name);
    while (this.live(gen)) {
      try {
        await this.jsm.consumers
          .add(NOTIFY_STREAM, {
            durable_name: durable,
            ack_policy: AckPolicy.Explicit,
            ack_wait: NOTIFY_ACK_WAIT_MS * NS_PER_MS,
            // Retries are the sink's own (capped backoff, then given up and recorded): never the server's.
            max_deliver: -1,
            // A sink added later starts with what comes next, not the stream's whole history.
            deliver_policy: DeliverPolicy.New,
            max_ack_pending: 10_000,
            filter_subject: NOTIFY_SUBJECT,
          })
          // Made already by another hub: the same consumer, whatever it was made with.
          .catch(() => this.jsm.consumers.info(NOTIFY_STREAM, durable));
        const c = await this.js.consumers.get(NOTIFY_STREAM, durable);
        const msgs = await c.consume({ max_messages: 200 });
        if (!this.live(gen)) {
          void msgs.close();
          return;
        }
        this.running.add(msgs);
        for await (const m of msgs) {
          if (!this.live(gen)) {
            m.nak();
            continue;
          }
          await this.handle(sink, m).catch((e: unknown) => {
            this.log.warn({ sink: sink.name, err: (e as Error).message }, 'notification not taken; offered again');
            m.nak(RETRY_MS);
          });
        }
        this.running.delete(msgs);
      } catch (e) {
        if (this.live(gen)) this.log.warn({ sink: sink.name, err: (e as Error).message }, 'notification consumer failed; starting it again');
      }
      if (this.live(gen)) await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }

  private async handle(sink: NotifySinkConfig, m: JsMsg): Promise<void> {
    const n = m.json<HubNotification>();
    // Redelivered while this hub still works on it (a "working" went astray): keep it, ack the newest.
    if (this.book.isHeld(sink.name, n.id)) {
      this.book.hold(sink.name, n, m.seq, m);
      return;
    }
    const taker = this.taker;
    if (!taker) {
      m.nak(RETRY_MS);
      return;
    }
    if (!taker.wants(sink, n)) {
      m.ack();
      return;
    }
    // A redelivery may carry what another hub did with it: ask the bucket, not the watch.
    const d = m.redelivered ? await this.book.outcome(sink.name, n.id) : (this.book.get(n.id)?.sinks.get(sink.name) ?? null);
    if (d && d.state !== 'pending') {
      m.ack();
      return;
    }
    if (n.trigger === 'resolved') {
      const blockedId = blockedIdOf(n);
      const b = this.book.get(blockedId)?.sinks.get(sink.name);
      if (b?.state === 'pending' && !this.book.isHeld(sink.name, blockedId)) {
        m.nak(FOLLOW_WAIT_MS);
        return;
      }
    }
    this.book.hold(sink.name, n, m.seq, m);
    if (!taker.take(sink.name, n, d?.delivery ?? null)) this.book.release(sink.name, n.id);
  }
}
