// Acts across hubs: each hub answers act requests on its own subject for the hosts whose links it
// holds, and a hub asked to act on a host another hub holds sends the frame there as a NATS
// request. Nothing here retries: one request is one frame to the host, as on one hub. A request
// nobody could take (no responder, or the holder no longer has the link) is `undelivered`.

import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { ActResult } from '../../shared/protocol.js';
import { ActUndeliveredError, type ActTarget } from '../http/act.js';
import { ActTimeoutError, type ActRequest } from '../link/session.js';
import { actSubject } from './keys.js';

interface ActAsk {
  host: string;
  frame: ActRequest;
  timeout_ms: number;
}

type ActAnswer = { result: ActResult } | { undelivered: true } | { unknown: string };

/** Answer act requests for this hub's own links. */
export function serveActs(nc: NatsConnection, hubId: string, local: (host: string) => ActTarget | undefined, logger: Logger): Subscription {
  return nc.subscribe(actSubject(hubId), {
    callback: (err, msg) => {
      if (err) return;
      let ask: ActAsk;
      try {
        ask = msg.json<ActAsk>();
      } catch {
        return;
      }
      const reply = (a: ActAnswer): void => void msg.respond(JSON.stringify(a));
      const s = local(ask.host);
      if (!s?.isOpen) return reply({ undelivered: true });
      s.request(ask.frame, Math.max(1, ask.timeout_ms)).then(
        (result) => reply({ result }),
        (e: unknown) => {
          logger.info({ host: ask.host, err: (e as Error).message }, 'routed act had no answer');
          reply({ unknown: (e as Error).message });
        },
      );
    },
  });
}

const isNoResponders = (e: unknown): boolean => {
  const x = e as { isNoResponders?: () => boolean; name?: string; cause?: { name?: string } };
  return x.isNoResponders?.() === true || x.name === 'NoRespondersError' || x.cause?.name === 'NoRespondersError';
};

/** The act target for a host `owner` (another hub) holds. */
export function remoteTarget(nc: NatsConnection, owner: string, host: string): ActTarget {
  return {
    isOpen: true,
    async request(frame: ActRequest, timeoutMs: number): Promise<ActResult> {
      const ask: ActAsk = { host, frame, timeout_ms: timeoutMs };
      let a: ActAnswer;
      try {
        // A little longer than the owner waits, so its own timeout answer arrives first.
        const m = await nc.request(actSubject(owner), JSON.stringify(ask), { timeout: timeoutMs + 1000 });
        a = m.json<ActAnswer>();
      } catch (e) {
        if (isNoResponders(e)) throw new ActUndeliveredError(`no hub answers for ${host}`);
        throw new ActTimeoutError(frame.id, timeoutMs);
      }
      if ('result' in a) return a.result;
      if ('undelivered' in a) throw new ActUndeliveredError(`the hub holding ${host} no longer has its link`);
      throw new ActTimeoutError(frame.id, timeoutMs);
    },
  };
}
