// Bearer-token checks. Every lookup hashes the presented token and compares it with every known
// digest, so neither the token's length nor how far a guess matched shows in the timing. A client
// token with an expiry (`tma hub pair --ttl`) is refused from that moment, as `expired`.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { HubConfig, Role } from '../config/config.js';

export type Principal = { kind: 'collector'; host: string } | { kind: 'client'; name: string; role: Role };

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

type Entry = { digest: Buffer; who: Principal; expiresAt?: number };

export class TokenBook {
  private entries: Entry[];

  constructor(
    config: Pick<HubConfig, 'collectors' | 'clients'>,
    private readonly clock: () => number = Date.now,
  ) {
    this.entries = TokenBook.entriesOf(config);
  }

  /** Take the credentials of a reloaded config; the next lookup already sees them. */
  replace(config: Pick<HubConfig, 'collectors' | 'clients'>): void {
    this.entries = TokenBook.entriesOf(config);
  }

  private static entriesOf(config: Pick<HubConfig, 'collectors' | 'clients'>): Entry[] {
    return [
      ...config.collectors.map((c) => ({ digest: digest(c.token), who: { kind: 'collector', host: c.host } satisfies Principal })),
      ...config.clients.map((c) => ({
        digest: digest(c.token),
        who: { kind: 'client', name: c.name, role: c.role } satisfies Principal,
        ...(c.expiresAt !== undefined ? { expiresAt: c.expiresAt } : {}),
      })),
    ];
  }

  /** The principal a token belongs to, `expired`, or null. Scans every entry whatever matches first. */
  lookup(token: string): Principal | 'expired' | null {
    const d = digest(token);
    let found: Entry | null = null;
    for (const e of this.entries) if (timingSafeEqual(d, e.digest) && found === null) found = e;
    if (found === null) return null;
    return found.expiresAt !== undefined && this.clock() >= found.expiresAt ? 'expired' : found.who;
  }

  /** Client names whose expiry has passed (their open streams are ended). */
  expiredClients(): string[] {
    const now = this.clock();
    return this.entries.filter((e) => e.who.kind === 'client' && e.expiresAt !== undefined && now >= e.expiresAt).map((e) => (e.who as { name: string }).name);
  }
}

/** The token of an `Authorization: Bearer …` header, or null when absent or malformed. */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

export type AuthOutcome<P> = { ok: true; who: P } | { ok: false; status: 401 | 403; reason: 'missing' | 'unknown' | 'expired' | 'wrong-kind' };

export function authCollector(book: TokenBook, header: string | null | undefined): AuthOutcome<{ kind: 'collector'; host: string }> {
  const token = bearerToken(header);
  if (token === null) return { ok: false, status: 401, reason: 'missing' };
  const who = book.lookup(token);
  if (!who) return { ok: false, status: 401, reason: 'unknown' };
  if (who === 'expired') return { ok: false, status: 401, reason: 'expired' };
  if (who.kind !== 'collector') return { ok: false, status: 403, reason: 'wrong-kind' };
  return { ok: true, who };
}

export function authClient(book: TokenBook, header: string | null | undefined): AuthOutcome<{ kind: 'client'; name: string; role: Role }> {
  const token = bearerToken(header);
  if (token === null) return { ok: false, status: 401, reason: 'missing' };
  const who = book.lookup(token);
  if (!who) return { ok: false, status: 401, reason: 'unknown' };
  if (who === 'expired') return { ok: false, status: 401, reason: 'expired' };
  if (who.kind !== 'client') return { ok: false, status: 403, reason: 'wrong-kind' };
  return { ok: true, who };
}
