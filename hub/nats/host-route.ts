// Requests for a host across hubs (act, mute, preview): each hub answers them on its own subject
// for the hosts whose links it holds, and a hub asked about a host another hub holds sends the
// frame there as a NATS request. Nothing here retries: one request is one frame to the host, as on
// one hub. A request nobody could take (no responder, or the holder no longer has the link) is
// undelivered. The checks of who may ask stay with the hub that was asked over HTTP; the host's
// own policy (`[remote]`) stays with its collector.

import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { ActResult, MuteResult, PreviewResult } from '../../shared/protocol.js';
import { requestOf, UndeliveredError, type HostTarget } from '../link/host-target.js';
import { ActTimeoutError, type ActRequest, type HostRequest, type MuteRequest, type PreviewRequest } from '../link/session.js';
import { routeSubject } from './keys.js';
import type { AskChecker, SealedAsk } from './act-seal.js';

interface HostAsk extends SealedAsk {
  host: string;
  frame: HostRequest;
  timeout_ms: number;
}

type HostAnswer = { result: unknown } | { undelivered: true } | { unknown: string } | { refused: string };

/** Answer requests for this hub's own links; one that `checker` refuses never reaches the host. */
export function serveHostRequests(
  nc: NatsConnection,
  hubId: string,
  local: (host: string) => HostTarget | undefined,
  logger: Logger,
  checker: AskChecker,
  onRefused: () => void = () => undefined,
): Subscription {
  return nc.subscribe(routeSubject(hubId), {
    callback: (err, msg) => {
      if (err) return;
      let ask: HostAsk;
      try {
        ask = msg.json<HostAsk>();
      } catch {
        return;
      }
      const reply = (a: HostAnswer): void => void msg.respond(JSON.stringify(a));
      const refused = checker.refusal(ask);
      if (refused !== null) {
        onRefused();
        logger.warn({ host: ask.host, type: ask.frame?.type, from: ask.seal?.from, reason: refused }, 'routed request refused');
        return reply({ refused });
      }
      const s = local(ask.host);
      if (!s?.isOpen) return reply({ undelivered: true });
      requestOf(s, ask.frame, Math.max(1, ask.timeout_ms)).then(
        (result) => reply({ result }),
        (e: unknown) => {
          logger.info({ host: ask.host, type: ask.frame?.type, err: (e as Error).message }, 'routed request had no answer');
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

/** The target for a host `owner` (another hub) holds; `seal` adds this hub's proof to each request. */
export function remoteTarget(nc: NatsConnection, owner: string, host: string, seal: (ask: HostAsk) => HostAsk): HostTarget {
  function request(frame: ActRequest, timeoutMs: number): Promise<ActResult>;
  function request(frame: MuteRequest, timeoutMs: number): Promise<MuteResult>;
  function request(frame: PreviewRequest, timeoutMs: number): Promise<PreviewResult>;
  async function request(frame: HostRequest, timeoutMs: number): Promise<unknown> {
    const ask = seal({ host, frame, timeout_ms: timeoutMs });
    let a: HostAnswer;
    try {
      // A little longer than the owner waits, so its own timeout answer arrives first.
      const m = await nc.request(routeSubject(owner), JSON.stringify(ask), { timeout: timeoutMs + 1000 });
      a = m.json<HostAnswer>();
    } catch (e) {
      if (isNoResponders(e)) throw new UndeliveredError(`no hub answers for ${host}`);
      throw new ActTimeoutError(frame.id, timeoutMs);
    }
    if ('result' in a) return a.result;
    if ('undelivered' in a) throw new UndeliveredError(`the hub holding ${host} no longer has its link`);
    if ('refused' in a) throw new UndeliveredError(`the hub holding ${host} refused the request: ${a.refused}`);
    throw new ActTimeoutError(frame.id, timeoutMs);
  }
  return { isOpen: true, request };
}
