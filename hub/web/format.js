// Pure helpers of the fleet page: classes, counts, which buttons a row gets, and durations.
// Nothing here touches the DOM or the network.

/** The disjoint classes, in the order a person should look at them. */
export const CLASSES = ['blocked', 'working', 'done', 'idle', 'unknown'];

/** A shape per class as well as a colour, so the state reads without colour vision. */
export const GLYPH = { blocked: '▲', working: '●', done: '✔', idle: '○', unknown: '?' };

/** `done` is idle with attention up: the same rule every surface of the tool uses. */
export function classOf(row) {
  return row.state === 'idle' && row.attention === true ? 'done' : row.state in GLYPH ? row.state : 'unknown';
}

export function countClasses(rows) {
  const counts = Object.fromEntries(CLASSES.map((c) => [c, 0]));
  for (const r of rows) counts[classOf(r)] += 1;
  return counts;
}

/**
 * The actions this row offers, in button order. Answering a prompt only makes sense on a
 * permission prompt; interrupting only on a working agent. The host must allow the action
 * remotely, and its link must be up: a stale row's prompt may already be gone.
 */
export function rowActions(row, host, role) {
  if (role !== 'operator' || !host || !host.reachable || host.stale || row.stale) return [];
  const allowed = new Set(Array.isArray(host.actions_allowed) ? host.actions_allowed : []);
  const wanted = row.state === 'blocked' && row.detail === 'permission' ? ['approve', 'deny'] : row.state === 'working' ? ['interrupt'] : [];
  return wanted.filter((a) => allowed.has(a));
}

/** "45s", "4m", "2h 5m", "3d 4h": coarse on purpose, the numbers are a glance, not a timer. */
export function shortDuration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/** A row's key in the fleet: pane ids are unique only within one server of one host. */
export function rowKey(row) {
  return `${row.host}\u0000${row.server}\u0000${row.pane}`;
}

/** The last path segment of a tmux socket path: "default" for …/tmux-1000/default. */
export function serverLabel(server) {
  if (!server) return '(server gone)';
  const parts = server.split('/').filter(Boolean);
  return parts.length ? parts[parts.length - 1] : server;
}

/** An idempotency key for one click; works without a secure context (plain-http LAN hubs). */
export function newSlot() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * How long each row has been in its state, without comparing clocks of different machines:
 * `stamped_at_ms - since_ms` is a duration on the observing host's own clock, and the time since
 * this page first saw that stamp is a duration on the browser's. Their sum errs low by the
 * transit time of the stamp, never by a clock skew. `now` is the browser's monotonic clock.
 */
export class AgeBook {
  constructor() {
    this.seen = new Map();
  }

  /** Note the rows of a new document; forget rows that left it. */
  observe(rows, now) {
    const keep = new Set();
    for (const r of rows) {
      const k = rowKey(r);
      keep.add(k);
      const prev = this.seen.get(k);
      if (!prev || prev.since !== r.since_ms || prev.stamped !== r.stamped_at_ms) {
        this.seen.set(k, { since: r.since_ms, stamped: r.stamped_at_ms, at: now });
      }
    }
    for (const k of [...this.seen.keys()]) if (!keep.has(k)) this.seen.delete(k);
  }

  /**
   * Milliseconds in the current state, or null when the host gave no stamp. A stale row stops
   * at its last observation: what happened on that host since is not known.
   */
  ageMs(row, now) {
    const e = this.seen.get(rowKey(row));
    if (!e || typeof e.stamped !== 'number' || typeof e.since !== 'number') return null;
    const onHost = Math.max(0, e.stamped - e.since);
    return row.stale ? onHost : onHost + Math.max(0, now - e.at);
  }
}

/**
 * Split an SSE byte stream (already decoded) into the data of each event. Returns the events found
 * and the unfinished tail to prepend to the next chunk. Comment lines (keepalives) carry no data.
 */
export function sseEvents(text) {
  // A CR at the very end may be the first half of a CRLF split across chunks: keep it for later.
  const held = text.endsWith('\r') ? '\r' : '';
  const normalized = (held ? text.slice(0, -1) : text).replace(/\r\n?/g, '\n');
  const blocks = normalized.split('\n\n');
  const rest = (blocks.pop() ?? '') + held;
  const events = [];
  for (const block of blocks) {
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
    if (data.length) events.push(data.join('\n'));
  }
  return { events, rest };
}
