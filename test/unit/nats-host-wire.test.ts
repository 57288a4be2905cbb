// The host status one hub writes to NATS for the others: its key set is pinned (a key is added,
// never renamed), and a followed host reads back what the owner's collector announced, so a mute
// or preview is judged the same on every hub.

import { expect, it } from 'vitest';
import { applyHostWire, hostWire } from '../../hub/nats/wire.js';
import { newHostRecord } from '../../hub/store/host-record.js';

it('pins the status keys, remote verbs included', () => {
  const h = newHostRecord('build1', 'ssh');
  h.remoteVerbs = ['preview'];
  expect(Object.keys(hostWire(h, 'hub-a'))).toEqual([
    'v',
    'hub',
    'transport',
    'reachable',
    'synced',
    'lastSeenMs',
    'reason',
    'collectorVersion',
    'servers',
    'actionsAllowed',
    'actionsByAgent',
    'sharesPrompt',
    'remoteVerbs',
    'lagMs',
    'lastRefusal',
    'seqBehind',
  ]);
});

it("a followed host takes its owner's remote verbs; an older owner's status without them reads as none", () => {
  const owner = newHostRecord('build1', 'ws');
  owner.remoteVerbs = ['preview', 'mute'];
  const w = hostWire(owner, 'hub-a');
  const followed = newHostRecord('build1', 'ws');
  applyHostWire(followed, JSON.parse(JSON.stringify(w)), null);
  expect(followed.remoteVerbs).toEqual(['preview', 'mute']);
  const { remoteVerbs: _, ...older } = w;
  applyHostWire(followed, older, null);
  expect(followed.remoteVerbs).toEqual([]);
});
