// The @agent_action lock value, `<expiry_ms>:<nonce>:<pid>:<name>`, and who holds it. Pure:
// the clock and the pid probe are arguments.

export const LOCK_SLACK_MS = 5000;

export interface LockValue {
  expiryMs: number;
  nonce: string;
  pid: number;
  name: string;
}

const NONCE = /^[0-9a-f]{32}$/;

export function isNonce(s: string): boolean {
  return NONCE.test(s);
}

/** 128 random bits as lowercase hex; the caller supplies the bytes (crypto lives outside). */
export function nonceFromBytes(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new Error('a lock nonce needs exactly 16 bytes');
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function formatLockValue(v: LockValue): string {
  return `${v.expiryMs}:${v.nonce}:${v.pid}:${v.name}`;
}

/** null for anything that is not a well-formed lock (including the empty, released value). */
export function parseLockValue(raw: string): LockValue | null {
  const m = /^(\d+):([0-9a-f]{32}):(\d+):([a-z0-9_-]+)$/.exec(raw.trim());
  if (!m) return null;
  return { expiryMs: Number(m[1]), nonce: m[2]!, pid: Number(m[3]), name: m[4]! };
}

/**
 * The expiry the server-side acquire compares: the value's leading digits, 0 when there are none.
 * This mirrors the tmux format exactly, so a value only we could not parse is still judged alike.
 */
export function leadingExpiry(raw: string): number {
  const m = /^[0-9]*/.exec(raw)!;
  return m[0] === '' ? 0 : Number(m[0]);
}

/** Lock expiry for a fire bounded by `boundMs` (the action's timeout, or its detach deadline). */
export function lockExpiry(now: number, boundMs: number): number {
  return now + boundMs + LOCK_SLACK_MS;
}

/**
 * Whether a stored value keeps us out. Expired values are free, except that a holder whose
 * process still runs is still working: its deadline was an estimate, its life is the fact.
 */
export function lockHeld(raw: string, now: number, pidAlive: (pid: number) => boolean): boolean {
  if (raw.trim() === '') return false;
  if (leadingExpiry(raw) >= now) return true;
  const v = parseLockValue(raw);
  return v !== null && v.pid > 0 && pidAlive(v.pid);
}

/** Whether the read-back after an acquire shows our nonce (anything else: we lost). */
export function holdsLock(readBack: string, nonce: string): boolean {
  return parseLockValue(readBack)?.nonce === nonce;
}
