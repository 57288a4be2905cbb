// Bearer-token checks. Every lookup hashes the presented token and compares it with every known
// digest, so neither the token's length nor how far a guess matched shows in the timing.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { HubConfig, Role } from '../config/config.js';

export type Principal = { kind: 'collector'; host: string } | { kind: 'client'; name: string; role: Role };

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export class TokenBook {
  private entries: { digest: Buffer; who: Principal }[];

  constructor(config: Pick<HubConfig, 'collectors' | 'clients'>) {
    this.entries = TokenBook.entriesOf(config);
  }

  /** Take the credentials of a reloaded config; the next lookup already sees them. */
  replace(config: Pick<HubConfig, 'collectors' | 'clients'>): void {
    this.entries = TokenBook.entriesOf(config);
  }

  private static entriesOf(config: Pick<HubConfig, 'collectors' | 'clients'>): { digest: Buffer; who: Principal }[] {
    return [
      ...config.collectors.map((c) => ({ digest: digest(c.token), who: { kind: 'collector', host: c.host } satisfies Principal })),
      ...config.clients.map((c) => ({ digest: digest(c.token), who: { kind: 'client', name: c.name, role: c.role } satisfies Principal })),
    ];
  }

  /** The principal a token belongs to, or null. Scans every entry whatever matches first. */
  lookup(token: string): Principal | null {
    const d = digest(token);
    let found: Principal | null = null;
    for (const e of this.entries) if (timingSafeEqual(d, e.digest) && found === null) found = e.who;
    return found;
  }
}

/** The token of an `Authorization: Bearer …` header, or null when absent or malformed. */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

export type AuthOutcome<P> = { ok: true; who: P } | { ok: false; status: 401 | 403; reason: 'missing' | 'unknown' | 'wrong-kind' };

export function authCollector(book: TokenBook, header: string | null | undefined): AuthOutcome<{ kind: 'collector'; host: string }> {
  const token = bearerToken(header);
  if (token === null) return { ok: false, status: 401, reason: 'missing' };
  const who = book.lookup(token);
  if (!who) return { ok: false, status: 401, reason: 'unknown' };
  if (who.kind !== 'collector') return { ok: false, status: 403, reason: 'wrong-kind' };
  return { ok: true, who };
}

export function authClient(book: TokenBook, header: string | null | undefined): AuthOutcome<{ kind: 'client'; name: string; role: Role }> {
  const token = bearerToken(header);
  if (token === null) return { ok: false, status: 401, reason: 'missing' };
  const who = book.lookup(token);
  if (!who) return { ok: false, status: 401, reason: 'unknown' };
  if (who.kind !== 'client') return { ok: false, status: 403, reason: 'wrong-kind' };
  return { ok: true, who };
}
