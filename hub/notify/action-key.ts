// The key that signs notification action links. It stays with the hub: 0600 in a file beside the
// notification journal, made once. Loading is one function so several hubs can share the key
// another way (a NATS KV entry) without the links changing shape.

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const ACTION_KEY_FILE = 'hub-action-key';

/** The signing key: read from `dir`, else made there (0600); `dir` null keeps a key for this process only. */
export function loadActionKey(dir: string | null): Buffer {
  if (dir === null) return randomBytes(32);
  const file = join(dir, ACTION_KEY_FILE);
  try {
    const hex = readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f]{64}$/.test(hex)) return Buffer.from(hex, 'hex');
    throw new Error(`${file}: not a key this hub wrote (64 hex digits); remove it to make a new one (every link out there stops working)`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  // `wx`: two hubs starting on one folder do not each write their own key.
  try {
    writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return loadActionKey(dir);
    throw e;
  }
  return key;
}
