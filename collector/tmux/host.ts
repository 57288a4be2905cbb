// The name this collector reports for its machine.

import { hostname } from 'node:os';

/** os.hostname() is uname's nodename; a blank one (odd containers) becomes `localhost`. */
export function hostName(): string {
  const h = hostname().trim();
  return h === '' ? 'localhost' : h;
}
