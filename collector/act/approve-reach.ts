// Whether `tma act approve` can reach an agent's pane at all, and why not: for `doctor`, which
// says so per pane before anyone needs it. Keys need the action manifest to list some for the
// agent; the API lane needs an endpoint that something listens on.

import { connect } from 'node:net';
import type { ActionManifest } from '../core/action-manifest.js';
import { endpointFor, laneFor } from './gate.js';

export interface ApproveReach {
  lane: 'keys' | 'api' | null;
  reachable: boolean;
  /** Why not, in a sentence a person can act on; null when it can. */
  reason: string | null;
  /** The endpoint the API lane would dial (not shown: it names a secret path); null for keys. */
  endpoint: string | null;
}

/** The lane an approve takes for `agent` and, for the API lane, the endpoint; no network here. */
export function approveLane(
  actions: readonly ActionManifest[],
  agent: string,
  paneEndpoint: string | null,
  apiBase: Readonly<Record<string, string>>,
): ApproveReach {
  const approve = actions.find((a) => a.name === 'approve');
  if (!approve || approve.kind !== 'keys') return { lane: null, reachable: false, reason: 'no approve action is loaded', endpoint: null };
  // The broker's rule (gate.ts laneFor): the API once an endpoint is known, else keys.
  const endpoint = agent in approve.api ? endpointFor(paneEndpoint, agent, apiBase) : null;
  const lane = laneFor(approve, agent, endpoint);
  if (lane === 'api') return { lane, reachable: true, reason: null, endpoint };
  if (lane === 'keys') return { lane, reachable: true, reason: null, endpoint: null };
  if (agent in approve.api) {
    return {
      lane: 'api',
      reachable: false,
      reason: `no API endpoint: the ${agent} plugin has not reported one (tma install-hooks ${agent}, then restart ${agent})`,
      endpoint: null,
    };
  }
  return { lane: null, reachable: false, reason: `the approve action has no keys for ${agent}`, endpoint: null };
}

/** Whether something accepts a TCP connection at the endpoint's host and port (one try, bounded). */
export function endpointListens(endpoint: string, timeoutMs: number): Promise<boolean> {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return Promise.resolve(false);
  }
  const port = Number(url.port || 80);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

/** approveLane, with the API lane's endpoint tried: an announced endpoint nobody serves is no way in. */
export async function approveReach(
  actions: readonly ActionManifest[],
  agent: string,
  paneEndpoint: string | null,
  apiBase: Readonly<Record<string, string>>,
  timeoutMs = 1000,
): Promise<ApproveReach> {
  const r = approveLane(actions, agent, paneEndpoint, apiBase);
  if (r.lane !== 'api' || r.endpoint === null) return r;
  if (await endpointListens(r.endpoint, timeoutMs)) return r;
  const where = new URL(r.endpoint).host;
  return {
    ...r,
    reachable: false,
    reason: `nothing listens at the API endpoint ${where} (an older plugin? tma install-hooks ${agent}, then restart ${agent})`,
  };
}
