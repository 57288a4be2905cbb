// Where a request for a host (act, mute, preview) goes: the host's own link on this hub (a
// `LinkSession`), or, on NATS, the hub that holds the link (nats/host-route.ts). Routes speak to
// this one shape, so every verb reaches a host the same way whichever hub was asked.

import type { ActResult, MuteResult, PreviewResult } from '../../shared/protocol.js';
import type { ActRequest, HostRequest, MuteRequest, PreviewRequest } from './session.js';

export interface HostTarget {
  readonly isOpen: boolean;
  request(frame: ActRequest, timeoutMs: number): Promise<ActResult>;
  request(frame: MuteRequest, timeoutMs: number): Promise<MuteResult>;
  request(frame: PreviewRequest, timeoutMs: number): Promise<PreviewResult>;
}

/** The request provably never reached the host (no hub holds its link): nothing can have happened there. */
export class UndeliveredError extends Error {}

/** One request of any kind, for code that relays frames without looking inside (nats/host-route.ts). */
export function requestOf(t: HostTarget, frame: HostRequest, timeoutMs: number): Promise<ActResult | MuteResult | PreviewResult> {
  switch (frame.type) {
    case 'act':
      return t.request(frame, timeoutMs);
    case 'mute':
      return t.request(frame, timeoutMs);
    case 'preview':
      return t.request(frame, timeoutMs);
    default:
      return Promise.reject(new Error(`no such request: ${String((frame as { type?: unknown }).type)}`));
  }
}
