// Pure helpers of the fleet page: classes, counts, which buttons a row gets, and durations.
// Nothing here touches the DOM or the network. Types are JSDoc, checked by hub/web/tsconfig.json.

/** @typedef {import('../../shared/tokens.js').StateClass} StateClass */

/**
 * The row fields the page reads; a fleet row has all of them.
 * @typedef {object} PageRow
 * @property {string} host
 * @property {string} server
 * @property {string} pane
 * @property {string} state
 * @property {boolean} attention
 * @property {string | null} detail
 * @property {number} since_ms
 * @property {number | null} stamped_at_ms
 * @property {boolean} [stale]
 * @property {string} [agent]
 * @property {string} [locator]
 * @property {string | null} [permission_request]
 * @property {string | null} [pending_tool]
 * @property {string | null} [pending_summary]
 */

/**
 * A row as the page holds it: the fields above and whatever else the hub sent (repo, branch,
 * episode and prompt ids).
 * @typedef {PageRow & { repo?: string; branch?: string; episode_ms?: number; prompt_id?: string | null }} ShownRow
 */

/**
 * What the page reads of a host.
 * @typedef {object} PageHost
 * @property {boolean} reachable
 * @property {boolean} stale
 * @property {string[]} [actions_allowed]
 * @property {Record<string, Record<string, string>> | null} [actions_by_agent]
 * @property {boolean | null} [shares_prompt]
 * @property {number | null} [clock_offset_ms]
 * @property {number | null} [last_seen_ms]
 */

/**
 * @typedef {object} PageFilters
 * @property {string[]} state
 * @property {string[]} host
 * @property {string[]} agent
 */

/** The disjoint classes, in the order a person should look at them. */
/** @type {StateClass[]} */
export const CLASSES = ['blocked', 'working', 'done', 'idle', 'unknown'];

/** A shape per class as well as a colour, so the state reads without colour vision. */
/** @type {Record<StateClass, string>} */
export const GLYPH = { blocked: '▲', working: '●', done: '✔', idle: '○', unknown: '?' };

/** `done` is idle with attention up: the same rule every surface of the tool uses. */
/**
 * @param {Pick<PageRow, 'state' | 'attention'>} row
 * @returns {StateClass}
 */
export function classOf(row) {
  return row.state === 'idle' && row.attention === true ? 'done' : row.state in GLYPH ? /** @type {StateClass} */ (row.state) : 'unknown';
}

/**
 * @param {readonly Pick<PageRow, 'state' | 'attention'>[]} rows
 * @returns {Record<StateClass, number>}
 */
export function countClasses(rows) {
  const counts = /** @type {Record<StateClass, number>} */ (Object.fromEntries(CLASSES.map((c) => [c, 0])));
  for (const r of rows) counts[classOf(r)] += 1;
  return counts;
}

/**
 * The details of a prompt approve and deny answer (manifests/actions/approve.toml `when.detail`):
 * a permission prompt, and Claude Code 2.1.332's dialogs that take their own keys. The host's gate
 * still decides; a detail missing here only hides the buttons.
 */
const ANSWERED_DETAILS = new Set(['permission', 'auto-mode-offer', 'auto-mode-check', 'permission-cursor-no', 'permission-cursor-yes']);

/**
 * The actions this row offers, in button order. Answering a prompt only makes sense on a
 * permission prompt; interrupting only on a working agent. The host must allow the action
 * remotely, and its link must be up: a stale row's prompt may already be gone. A host that
 * announced `actions_by_agent` is taken at its word about which agents each action reaches; an
 * action it answers through the agent's API needs the request id the pane published.
 * @param {Pick<PageRow, 'state' | 'detail' | 'stale' | 'agent' | 'permission_request'>} row
 * @param {PageHost | undefined} host
 * @param {string} role
 * @returns {string[]}
 */
export function rowActions(row, host, role) {
  if (role !== 'operator' || !host || !host.reachable || host.stale || row.stale) return [];
  const allowed = new Set(Array.isArray(host.actions_allowed) ? host.actions_allowed : []);
  const wanted = row.state === 'blocked' && ANSWERED_DETAILS.has(String(row.detail)) ? ['approve', 'deny'] : row.state === 'working' ? ['interrupt'] : [];
  return wanted.filter((a) => allowed.has(a) && laneReaches(host.actions_by_agent, row, a));
}

/**
 * @param {PageHost['actions_by_agent']} byAgent
 * @param {Pick<PageRow, 'agent' | 'permission_request'>} row
 * @param {string} action
 */
function laneReaches(byAgent, row, action) {
  // An older collector says nothing per agent: its own gate still stands behind every button.
  if (byAgent === null || byAgent === undefined || typeof byAgent !== 'object') return true;
  const agent = /** @type {string} */ (row.agent);
  const own = Object.hasOwn(byAgent, agent) ? byAgent[agent] : undefined;
  const lane = own?.[action] ?? byAgent['*']?.[action];
  if (lane === undefined) return false;
  if (lane === 'api') return typeof row.permission_request === 'string' && row.permission_request !== '';
  return true;
}

/** What a person reads on a button and a screen reader reads out: "Approve claude on build1, proj-api:1.0".
 * @param {string} action
 * @param {Pick<PageRow, 'agent' | 'host' | 'locator' | 'pane'>} row
 */
export function actionLabel(action, row) {
  const verb = ACTION_VERB[action] ?? action;
  return `${verb} ${String(row.agent)} on ${row.host}, ${row.locator || row.pane}`;
}

/** @type {Record<string, string>} */
export const ACTION_VERB = { approve: 'Approve', deny: 'Deny', interrupt: 'Interrupt' };

/** Said in place of the prompt's detail where its host keeps what is asked (`share_prompt = false`). */
export const NOT_SHARED = 'not shared by this host';

/**
 * What the agent is asking: the host's one-line summary when it shares one, else tool and detail;
 * on a blocked row of a host that does not share prompts, that it does not, not a bare "permission".
 * @param {PageRow} row
 * @param {Pick<PageHost, 'shares_prompt'> | null} [host]
 * @returns {string}
 */
export function askText(row, host) {
  if (typeof row.pending_summary === 'string' && row.pending_summary.trim()) return row.pending_summary.trim();
  const bits = [row.pending_tool, detailWord(row, host)].filter((x) => typeof x === 'string' && x);
  if (bits.length) return bits.join(' · ');
  return classOf(row) === 'done' ? 'finished its turn' : '';
}

/**
 * The row's detail as a person reads it: NOT_SHARED on a blocked row of a host that keeps it.
 * @param {Pick<PageRow, 'state' | 'detail'>} row
 * @param {Pick<PageHost, 'shares_prompt'> | null} [host]
 * @returns {string | null}
 */
export function detailWord(row, host) {
  return row.state === 'blocked' && host != null && host.shares_prompt === false ? NOT_SHARED : row.detail;
}

/**
 * Milliseconds the row has been in its state. `since_ms` is on the host's clock, so "now" is the
 * hub's clock moved by the host's offset; a stale row stops at the host's last word. Null when
 * the row has no since.
 * @param {PageRow} row
 * @param {PageHost | undefined} host
 * @param {number} hubNow
 * @returns {number | null}
 */
export function ageMs(row, host, hubNow) {
  if (typeof row.since_ms !== 'number' || !Number.isFinite(row.since_ms) || row.since_ms <= 0) return null;
  const offset = host && typeof host.clock_offset_ms === 'number' ? host.clock_offset_ms : 0;
  const end = row.stale && host && typeof host.last_seen_ms === 'number' ? Math.min(host.last_seen_ms, hubNow) : hubNow;
  return Math.max(0, end + offset - row.since_ms);
}

/**
 * The rows that need a person: blocked, then done, each oldest first across hosts. Since instants
 * come from different clocks, each is moved onto the hub's clock by its host's offset first.
 * @template {PageRow} R
 * @param {readonly R[]} rows
 * @param {Map<string, PageHost>} hostsByName
 * @returns {R[]}
 */
export function needsYou(rows, hostsByName) {
  /** @param {R} r */
  const hubSince = (r) => r.since_ms - (hostsByName.get(r.host)?.clock_offset_ms ?? 0);
  /** @type {Partial<Record<StateClass, number>>} */
  const rank = { blocked: 0, done: 1 };
  return rows
    .filter((r) => classOf(r) in rank)
    .sort((a, b) => (rank[classOf(a)] ?? 0) - (rank[classOf(b)] ?? 0) || hubSince(a) - hubSince(b) || (rowKey(a) < rowKey(b) ? -1 : 1));
}

/** Filters as the URL keeps them: `?state=blocked,done&host=build1&agent=claude`.
 * @param {string} search
 * @returns {PageFilters}
 */
export function parseFilters(search) {
  const q = new URLSearchParams(search);
  /** @param {string} k */
  const list = (k) =>
    (q.get(k) ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  return { state: list('state').filter((c) => /** @type {string[]} */ (CLASSES).includes(c)), host: list('host'), agent: list('agent') };
}

/** @param {PageFilters} f */
export function filtersQuery(f) {
  const q = new URLSearchParams();
  for (const k of /** @type {const} */ (['state', 'host', 'agent'])) if (f[k].length) q.set(k, f[k].join(','));
  const s = q.toString().replace(/%2C/g, ',');
  return s ? `?${s}` : '';
}

/**
 * @param {PageFilters} f
 * @param {PageRow} row
 */
export function passes(f, row) {
  return (
    (!f.state.length || f.state.includes(classOf(row))) &&
    (!f.host.length || f.host.includes(row.host)) &&
    (!f.agent.length || f.agent.includes(row.agent ?? ''))
  );
}

/** The tab title: how many panes need a person, first, so it reads in a crowded tab bar.
 * @param {number} count
 */
export function tabTitle(count) {
  return count > 0 ? `(${count}) tma fleet` : 'tma fleet';
}

/** "45s", "4m", "2h 5m", "3d 4h": coarse on purpose, the numbers are a glance, not a timer.
 * @param {number} ms
 */
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

/** A row's key in the fleet: pane ids are unique only within one server of one host.
 * @param {Pick<PageRow, 'host' | 'server' | 'pane'>} row
 */
export function rowKey(row) {
  // Asked for every row several times a redraw: a row object's key is made once.
  let k = KEYS.get(row);
  if (k === undefined) KEYS.set(row, (k = `${row.host}\u0000${row.server}\u0000${row.pane}`));
  return k;
}
/** @type {WeakMap<object, string>} */
const KEYS = new WeakMap();

/** The last path segment of a tmux socket path: "default" for …/tmux-1000/default.
 * @param {string} server
 */
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
 * Split an SSE byte stream (already decoded) into the data of each event. Returns the events found
 * and the unfinished tail to prepend to the next chunk. Comment lines (keepalives) carry no data.
 * @param {string} text
 * @returns {{ events: string[]; rest: string }}
 */
export function sseEvents(text) {
  // A CR at the very end may be the first half of a CRLF split across chunks: keep it for later.
  const held = text.endsWith('\r') ? '\r' : '';
  const normalized = (held ? text.slice(0, -1) : text).replace(/\r\n?/g, '\n');
  const blocks = normalized.split('\n\n');
  const rest = (blocks.pop() ?? '') + held;
  const events = [];
  for (const block of blocks) {
    /** @type {string[]} */
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
    if (data.length) events.push(data.join('\n'));
  }
  return { events, rest };
}

/**
 * `sseEvents` chunk by chunk, in time linear in the stream. A fleet document is one line of many
 * megabytes arriving in many chunks; re-splitting the whole unfinished tail at every chunk made
 * each document cost the square of its size (seconds of a frozen page for a large fleet). Chunks
 * without a line break cannot finish an event, so they are only kept until one comes.
 */
export class SseSplitter {
  constructor() {
    /** @type {string[]} */
    this.parts = [];
  }

  /**
   * Feed one decoded chunk; returns the data of the events it finished.
   * @param {string} chunk
   * @returns {string[]}
   */
  push(chunk) {
    this.parts.push(chunk);
    if (!/[\r\n]/.test(chunk)) return [];
    const { events, rest } = sseEvents(this.parts.join(''));
    this.parts = rest ? [rest] : [];
    return events;
  }
}
