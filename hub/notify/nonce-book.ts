// Which action-link nonces were used: a use is recorded (in memory at once, then fsynced to a
// file beside the journal) before anything is sent, so twenty concurrent uses of one link, or one
// use before and one after a hub restart, fire at most once. Entries are kept until their link
// expires; the file is rewritten without the expired ones when the hub starts.

import { appendFile, open } from 'node:fs/promises';
import { mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';

/** `persisted` found the nonce claimed first elsewhere (another hub of a shared book): a used link. */
export class NonceTakenError extends Error {}

/** The book as the route sees it; a shared store (NATS KV) may stand in for the file. */
export interface NonceStore {
  /** True once for a nonce: the caller may fire. False for every other claim of it. */
  claim(nonce: string, expiresMs: number): boolean;
  /** Settles once the claim is durable; the caller fires only then. Rejects with NonceTakenError if it lost. */
  persisted(nonce: string): Promise<void>;
  used(nonce: string): boolean;
}

export class NonceBook implements NonceStore {
  private readonly seen = new Map<string, number>();
  private readonly writes = new Map<string, Promise<void>>();

  constructor(
    private readonly path: string | null,
    private readonly clock: () => number = Date.now,
  ) {
    if (path === null) return;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const now = this.clock();
    for (const line of text.split('\n')) {
      const m = /^([0-9a-f]{1,64}) (\d+)$/.exec(line.trim());
      if (m && Number(m[2]) > now) this.seen.set(m[1]!, Number(m[2]));
    }
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, [...this.seen].map(([n, x]) => `${n} ${x}\n`).join(''), { mode: 0o600 });
    renameSync(tmp, path);
  }

  claim(nonce: string, expiresMs: number): boolean {
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, expiresMs);
    this.prune();
    if (this.path !== null) {
      const w = this.write(`${nonce} ${expiresMs}\n`);
      this.writes.set(nonce, w);
      w.then(
        () => this.writes.delete(nonce),
        () => undefined,
      );
    }
    return true;
  }

  persisted(nonce: string): Promise<void> {
    return this.writes.get(nonce) ?? Promise.resolve();
  }

  used(nonce: string): boolean {
    return this.seen.has(nonce);
  }

  private async write(line: string): Promise<void> {
    await appendFile(this.path!, line, { mode: 0o600 });
    const fh = await open(this.path!, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  private prune(): void {
    if (this.seen.size < 4096) return;
    const now = this.clock();
    for (const [n, x] of this.seen) if (x <= now) this.seen.delete(n);
    for (const n of this.writes.keys()) if (!this.seen.has(n)) this.writes.delete(n);
  }
}
