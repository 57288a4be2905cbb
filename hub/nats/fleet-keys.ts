// The keys a hub on NATS works with, all derived (HKDF-SHA256) from the fleet secret each hub is
// given out of band (`[nats] fleet_key_file`). Nothing secret is kept in a bucket: whoever can
// read NATS sees links, requests and rows, but can mint, send or forge none of them. One key per
// use, so a MAC made for one purpose is never accepted for another.

import { hkdfSync } from 'node:crypto';

export interface FleetKeys {
  /** Signs approve links: a link minted on any hub of the fleet works on every other. */
  links: Buffer;
  /** MACs the requests one hub sends another on `tma.act.<hub>`. */
  act: Buffer;
  /** MACs every row and host status an owning hub writes, checked by every hub that reads them. */
  rows: Buffer;
}

const derive = (secret: Buffer, use: string): Buffer => Buffer.from(hkdfSync('sha256', secret, 'tma fleet', `tma ${use} v1`, 32));

export const FLEET_KEY_MISSING =
  'nats: set fleet_key_file in hub.toml [nats]: a file (mode 0600, e.g. `openssl rand -hex 32`) holding the same secret on every hub, copied to each hub out of band; hubs no longer take the link key from NATS';

export function fleetKeys(secret: Buffer | undefined): FleetKeys {
  if (!secret) throw new Error(FLEET_KEY_MISSING);
  return { links: derive(secret, 'action links'), act: derive(secret, 'act requests'), rows: derive(secret, 'rows') };
}
