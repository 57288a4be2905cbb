// Holds the fleet as the page last saw it and applies the hub's `mode=changes` lines to it, so a
// flush costs the page only the rows that moved rather than a whole fleet document. Rows are keyed
// by (host, server, pane) and kept in fleet order (state rank, host, server, locator), hosts by
// name: the document handed on has the shape and order of the hub's own. Pure: no DOM, no fetch.

/** @typedef {{ host: string; server: string; pane: string; state: string; locator: string; [k: string]: unknown }} MirrorRow */
/** @typedef {{ host: string; [k: string]: unknown }} MirrorHost */
/** @typedef {{ agents: MirrorRow[]; hosts: MirrorHost[]; [k: string]: unknown }} MirrorDocument */
/**
 * A stream line as sent: a full document (no `type`) or a `changes` line.
 * @typedef {{ type?: unknown; agents?: unknown; hosts?: unknown; upserts?: unknown; removals?: unknown; hosts_gone?: unknown; [k: string]: unknown }} StreamLine
 */

/** @type {Record<string, number>} */
const RANK = { blocked: 0, working: 1, idle: 2, unknown: 3 };

/** @param {Pick<MirrorRow, 'host' | 'server' | 'pane'>} r */
const key = (r) => `${r.host}\u0000${r.server}\u0000${r.pane}`;
/**
 * @param {string} a
 * @param {string} b
 */
const byName = (a, b) => (a === b ? 0 : a < b ? -1 : 1);

/** `session:window.pane` → [session, window, pane]; tmux forbids ':' in a session name.
 * @param {unknown} locator
 * @returns {[string, number, number]}
 */
function locatorParts(locator) {
  const s = String(locator ?? '');
  const i = s.lastIndexOf(':');
  const session = i < 0 ? s : s.slice(0, i);
  const rest = i < 0 ? '' : s.slice(i + 1);
  const dot = rest.lastIndexOf('.');
  return [session, Number(rest.slice(0, dot)) || 0, Number(rest.slice(dot + 1)) || 0];
}

/**
 * The hub's fleet order.
 * @param {MirrorRow} a
 * @param {MirrorRow} b
 * @returns {number}
 */
export function compareRows(a, b) {
  const d = (RANK[a.state] ?? 3) - (RANK[b.state] ?? 3) || byName(a.host, b.host) || byName(a.server, b.server);
  if (d) return d;
  const [sa, wa, pa] = locatorParts(a.locator);
  const [sb, wb, pb] = locatorParts(b.locator);
  return byName(sa, sb) || wa - wb || pa - pb;
}

export class FleetMirror {
  constructor() {
    /** The last full document's other keys (`schema`, …), kept as sent. @type {Record<string, unknown> | null} */
    this.base = null;
    /** Rows in fleet order. @type {MirrorRow[]} */
    this.rows = [];
    /** host name → status. @type {Map<string, MirrorHost>} */
    this.hosts = new Map();
  }

  /**
   * Apply one stream line (parsed). A line without `type` is a full document and replaces
   * everything; a `changes` line moves only what it names. Returns the document to show, or null
   * for a line that changes nothing the page draws. Throws on a changes line before any document
   * or a line it does not understand: the stream is then out of step and must be reopened.
   * @param {unknown} line
   * @returns {MirrorDocument | null}
   */
  apply(line) {
    if (line === null || typeof line !== 'object') throw new Error('stream line is not an object');
    const msg = /** @type {StreamLine} */ (line);
    if (msg.type === undefined) {
      if (!Array.isArray(msg.agents)) throw new Error('document without agents');
      const { agents, hosts, ...rest } = msg;
      this.base = rest;
      this.rows = /** @type {MirrorRow[]} */ (agents).slice();
      this.hosts = new Map((Array.isArray(hosts) ? /** @type {MirrorHost[]} */ (hosts) : []).map((h) => [h.host, h]));
      return this.document();
    }
    if (msg.type !== 'changes') return null;
    if (this.base === null) throw new Error('changes before any document');
    /** @type {MirrorRow[]} */
    const upserts = Array.isArray(msg.upserts) ? msg.upserts : [];
    /** @type {MirrorRow[]} */
    const removals = Array.isArray(msg.removals) ? msg.removals : [];
    /** @type {Set<string>} */
    const gone = new Set(Array.isArray(msg.hosts_gone) ? msg.hosts_gone : []);
    /** @type {MirrorHost[]} */
    const hostsIn = Array.isArray(msg.hosts) ? msg.hosts : [];
    for (const h of hostsIn) this.hosts.set(h.host, h);
    for (const name of gone) this.hosts.delete(name);
    const drop = new Set([...upserts, ...removals].map(key));
    // A host that left takes its rows with it, whether or not the line lists them one by one.
    const kept = this.rows.filter((r) => !drop.has(key(r)) && !gone.has(r.host));
    const added = upserts.filter((r) => !gone.has(r.host)).sort(compareRows);
    this.rows = merge(kept, added);
    return this.document();
  }

  /**
   * The current fleet as a document shaped like `/v1/agents`.
   * @returns {MirrorDocument}
   */
  document() {
    const hosts = [...this.hosts.values()].sort((a, b) => byName(a.host, b.host));
    return { ...this.base, agents: this.rows.slice(), hosts };
  }
}

/**
 * Two lists already in fleet order, merged; a tie keeps `a`'s row first.
 * @param {MirrorRow[]} a
 * @param {MirrorRow[]} b
 */
function merge(a, b) {
  if (b.length === 0) return a;
  /** @type {MirrorRow[]} */
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(compareRows(b[j], a[i]) < 0 ? b[j++] : a[i++]);
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}
