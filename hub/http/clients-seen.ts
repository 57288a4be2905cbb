// When each client token was last used, by client name: what `tma hub clients` shows beside the
// paired devices. Kept in a small state file, not behind an endpoint, so the list reads without a
// token and survives a restart. Requests only touch memory; the file is rewritten (one rename) at
// most once per interval, and only when something changed. A stream still open counts as seen at
// every write.

import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface ClientsSeenFile {
  schema: 1;
  /** Client name → epoch ms of its last accepted request (or of a write while its stream was open). */
  clients: Record<string, number>;
}

export function readClientsSeen(file: string): Record<string, number> {
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Partial<ClientsSeenFile>;
    const out: Record<string, number> = {};
    if (doc && typeof doc.clients === 'object' && doc.clients !== null) {
      for (const [name, at] of Object.entries(doc.clients)) if (typeof at === 'number' && Number.isFinite(at)) out[name] = at;
    }
    return out;
  } catch {
    return {};
  }
}

export class ClientsSeen {
  private readonly seen: Map<string, number>;
  private dirty = false;
  private readonly timer: ReturnType<typeof setInterval> | null;

  constructor(
    private readonly o: {
      file: string | null;
      clock: () => number;
      /** Names with a stream open now. */
      open: () => string[];
      intervalMs?: number;
      onError?: (message: string) => void;
    },
  ) {
    this.seen = new Map(Object.entries(o.file ? readClientsSeen(o.file) : {}));
    this.timer = o.file ? setInterval(() => this.write(), o.intervalMs ?? 5000) : null;
    this.timer?.unref();
  }

  touch(name: string): void {
    this.seen.set(name, this.o.clock());
    this.dirty = true;
  }

  /** Forget a client that was removed from hub.toml. */
  forget(name: string): void {
    if (this.seen.delete(name)) this.dirty = true;
  }

  get(name: string): number | undefined {
    return this.seen.get(name);
  }

  private write(): void {
    for (const name of this.o.open()) this.touch(name);
    if (!this.dirty || !this.o.file) return;
    this.dirty = false;
    const doc: ClientsSeenFile = { schema: 1, clients: Object.fromEntries(this.seen) };
    const tmp = `${this.o.file}.tma-new-${process.pid}`;
    try {
      mkdirSync(dirname(this.o.file), { recursive: true, mode: 0o700 });
      writeFileSync(tmp, `${JSON.stringify(doc)}\n`, { mode: 0o600 });
      renameSync(tmp, this.o.file);
    } catch (e) {
      rmSync(tmp, { force: true });
      this.o.onError?.(`cannot write ${this.o.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.write();
  }
}
