// The proof on a hub-to-hub request (act-seal.ts): only a request sealed with the fleet's act key,
// for this hub, within the clock window, and not seen before is answered.

import { expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { ASK_WINDOW_MS, AskChecker, sealAsk, type SealedAsk } from '../../hub/nats/act-seal.js';

const key = randomBytes(32);
const ask: SealedAsk = { host: 'build1', frame: { type: 'act', id: 'a1', action: 'approve', pane: '%1' }, timeout_ms: 1000 };
const T = 1_700_000_000_000;

function checker(now: { t: number }, self = 'hub-b') {
  return new AskChecker(key, self, () => now.t);
}

it('answers a sealed request once; the same request again is a replay', () => {
  const now = { t: T };
  const c = checker(now);
  const sealed = sealAsk(key, ask, 'hub-a', 'hub-b', T);
  expect(c.refusal(sealed)).toBeNull();
  expect(c.refusal(sealed)).toBe('request nonce already seen (a replay)');
  // A replay a little later, still inside the window, is refused the same.
  now.t = T + ASK_WINDOW_MS - 1;
  expect(c.refusal(JSON.parse(JSON.stringify(sealed)) as SealedAsk)).toBe('request nonce already seen (a replay)');
  // A fresh seal of the same request is a new request.
  expect(c.refusal(sealAsk(key, ask, 'hub-a', 'hub-b', now.t))).toBeNull();
});

it('refuses a request sealed outside the clock window, either side, and takes one at its edge', () => {
  const now = { t: T };
  const c = checker(now);
  expect(c.refusal(sealAsk(key, ask, 'hub-a', 'hub-b', T - ASK_WINDOW_MS - 1))).toBe("request sealed 30 s from this hub's clock (window 30 s)");
  expect(c.refusal(sealAsk(key, ask, 'hub-a', 'hub-b', T + ASK_WINDOW_MS + 1000))).toBe("request sealed -31 s from this hub's clock (window 30 s)");
  expect(c.refusal(sealAsk(key, ask, 'hub-a', 'hub-b', T - ASK_WINDOW_MS))).toBeNull();
  expect(c.refusal(sealAsk(key, ask, 'hub-a', 'hub-b', T + ASK_WINDOW_MS))).toBeNull();
});

it('a replay is refused even after the owner has forgotten nonces that ran out', () => {
  const now = { t: T };
  const c = checker(now);
  const first = sealAsk(key, ask, 'hub-a', 'hub-b', T);
  expect(c.refusal(first)).toBeNull();
  // Over 1,024 nonces later, past the first one's window: forgotten, but its time is out too.
  now.t = T + ASK_WINDOW_MS + 1;
  for (let i = 0; i < 1100; i++) expect(c.refusal(sealAsk(key, ask, 'hub-a', 'hub-b', now.t))).toBeNull();
  expect(c.refusal(first)).toMatch(/from this hub's clock/);
});

it('refuses a request with no seal, for another hub, altered, moved in time or under another key', () => {
  const c = checker({ t: T });
  const sealed = sealAsk(key, ask, 'hub-a', 'hub-b', T);
  expect(c.refusal(ask)).toBe('request carries no fleet seal');
  expect(c.refusal({ ...sealed, seal: { ...sealed.seal!, nonce: 7 as unknown as string } })).toBe('request seal is malformed');
  expect(c.refusal(sealAsk(key, ask, 'hub-a', 'hub-c', T))).toBe('request sealed for hub hub-c, not this one');
  // Readdressed, re-timed or with another frame: the MAC no longer verifies.
  expect(c.refusal({ ...sealed, seal: { ...sealed.seal!, to: 'hub-b', from: 'hub-x' } })).toMatch(/does not verify/);
  expect(c.refusal({ ...sealed, seal: { ...sealed.seal!, at_ms: T + 1 } })).toMatch(/does not verify/);
  expect(c.refusal({ ...sealed, frame: { ...(ask.frame as object), action: 'deny' } })).toMatch(/does not verify/);
  expect(c.refusal({ ...sealed, host: 'laptop' })).toMatch(/does not verify/);
  expect(c.refusal(sealAsk(randomBytes(32), ask, 'hub-a', 'hub-b', T))).toMatch(/does not verify/);
});
