// Draws fleet documents into the page: the "needs you" list first, then every host's agents.
// Every string that came from a row or a host goes in through textContent, never as markup.
// Elements are kept per row key (host, server, pane) and patched in place: a row the document
// hands over unchanged (the same object, the same host, the same act) is not touched beyond its
// age, other rows only where a cell differs (patch.js), and a list is reordered by moving only the
// rows that changed place. Each list's order is held still while a person is about to tap it (see
// order.js), so a button under a finger is never swapped for another agent's.

import {
  ACTION_VERB,
  CLASSES,
  GLYPH,
  actionLabel,
  ageMs,
  askText,
  classOf,
  detailWord,
  countClasses,
  needsYou,
  passes,
  rowActions,
  rowKey,
  serverLabel,
  shortDuration,
} from './format.js';
import { OrderKeeper } from './order.js';
import { arrange, dataOf, el, setAttr, setData, setHidden, setText } from './patch.js';

/** A row as drawn: ShownRow, and whether the person muted its pane. @typedef {import('./format.js').ShownRow & { muted?: boolean }} Row */
/** @typedef {import('./format.js').StateClass} StateClass */
/**
 * A host as the view reads it: what format.js reads, and its name, servers and header facts.
 * @typedef {import('./format.js').PageHost & { host: string; servers?: { server: string }[]; reason?: string | null; transport?: string | null; collector_version?: string | null }} Host
 */
/**
 * A fleet document as the view draws it.
 * @typedef {{ agents: Row[]; hosts: Host[] }} FleetDoc
 */
/**
 * The act result's fields the page shows; a request the hub did not answer has no exit code.
 * @typedef {{ outcome: string; reason?: string | null; exit_code?: number }} ActResult
 */
/**
 * One act this page sent, by rowKey: in flight (`pending`) or answered, and what the row showed
 * (its episode and prompt) when it was pressed.
 * @typedef {object} Act
 * @property {string} action
 * @property {boolean} pending
 * @property {string[]} offered
 * @property {number | undefined} episode
 * @property {string | null} prompt
 * @property {number} at
 * @property {string} [outcome]
 * @property {string | null} [reason]
 * @property {number} [exit_code]
 */
/**
 * @typedef {object} DrawContext
 * @property {string} role
 * @property {number} hubNow
 * @property {import('./format.js').PageFilters} filters
 * @property {boolean} held
 * @property {Map<string, Act>} acts
 */
/**
 * @typedef {object} ViewParts
 * @property {HTMLElement} needsList
 * @property {HTMLElement} needsEmpty
 * @property {HTMLElement} needsCount
 * @property {HTMLElement} hosts
 * @property {HTMLElement} counts
 * @property {HTMLElement} emptyFleet
 */
/** @typedef {{ section: HTMLElement; status: HTMLElement; meta: HTMLElement; list: HTMLElement; empty: HTMLElement }} HostPart */
/** @typedef {{ state: HTMLElement; agent: HTMLElement; host: HTMLElement | null; where: HTMLElement; detail: HTMLElement; age: HTMLElement; repo: HTMLElement; actions: HTMLElement; outcome: HTMLElement }} RowCells */
/** What a row element was last filled from: when all of it is the same again, only the age can differ. @typedef {{ row: Row; host: Host | undefined; act: Act | undefined; role: string }} Drawn */
/**
 * A row's element: its cells, the action buttons it was last drawn with (so unchanged ones are
 * kept), the row its buttons act on, what it was last filled from, and whether it is held greyed.
 * @typedef {HTMLDivElement & { cells: RowCells; actionSig: string | null; row: Row | null; offered: string[]; drawn: Drawn | null; left: boolean }} RowEl
 */

/** @type {Record<string, string>} */
const PENDING_LABEL = { approve: 'approving…', deny: 'denying…', interrupt: 'interrupting…' };

export class FleetView {
  /**
   * `parts`: `{ needsList, needsEmpty, needsCount, hosts, counts, emptyFleet }` elements.
   * `onAction(row, action, offered)` is called when an operator presses an action button;
   * `onFilterState(cls)` when a state chip is pressed.
   * @param {ViewParts} parts
   * @param {(row: Row, action: string, offered: string[]) => void} onAction
   * @param {(cls: StateClass) => void} onFilterState
   */
  constructor(parts, onAction, onFilterState) {
    this.p = parts;
    this.onAction = onAction;
    this.onFilterState = onFilterState;
    /** @type {Map<string, RowEl>} */
    this.needsEls = new Map();
    /** @type {Map<string, RowEl>} */
    this.fleetEls = new Map();
    /** @type {Map<string, HostPart>} */
    this.hostParts = new Map();
    /** @type {Map<string, HTMLDivElement>} */
    this.serverLines = new Map();
    this.needsOrder = new OrderKeeper();
    this.hostOrder = new OrderKeeper();
    /** @type {Map<string, OrderKeeper>} */
    this.serverOrders = new Map();
    this.wasHeld = false;
  }

  /**
   * Draw `doc`. `ctx`: `{ role, hubNow, filters, held, acts }`: the hub's clock as estimated from
   * its Date headers, the URL filters, whether order is held, and rowKey → act state.
   * @param {FleetDoc} doc
   * @param {DrawContext} ctx
   * @returns {{ needsCount: number }}
   */
  render(doc, ctx) {
    const rows = Array.isArray(doc.agents) ? doc.agents : [];
    const hosts = Array.isArray(doc.hosts) ? doc.hosts.slice() : [];
    const hostsByName = new Map(hosts.map((h) => [h.host, h]));
    for (const r of rows) {
      if (hostsByName.has(r.host)) continue;
      // A row whose host the document does not list: kept, under a host said to be unreachable.
      const h = { host: r.host, reachable: false, stale: true, servers: [] };
      hosts.push(h);
      hostsByName.set(r.host, h);
    }
    const f = ctx.filters;
    const shown = rows.filter((r) => passes(f, r));
    // Settling after a hold is the one re-sort worth animating; live updates otherwise just land.
    const animate = this.wasHeld && !ctx.held;
    this.wasHeld = ctx.held;

    this.renderCounts(rows, f);

    // Needs you.
    const needs = needsYou(shown, hostsByName);
    const needsRows = new Map(needs.map((r) => [rowKey(r), r]));
    const { keys: needKeys } = this.needsOrder.order([...needsRows.keys()], ctx.held);
    const allByKey = new Map(rows.map((r) => [rowKey(r), r]));
    const needEls = this.placeRows(needKeys, needsRows, this.needsEls, true, (r) => hostsByName.get(r.host), ctx, allByKey);
    const needSet = new Set(needKeys);
    // A row that leaves the list keeps its element while it is in the fleet: rows go in and out of
    // "needs you" all day, and one made again each time costs far more than one patched.
    for (const k of [...this.needsEls.keys()]) if (!needSet.has(k) && !allByKey.has(k)) this.needsEls.delete(k);
    arrange(this.p.needsList, needEls, animate);
    setHidden(this.p.needsEmpty, needEls.length > 0);
    setText(this.p.needsCount, String(needs.length));

    // Every host.
    /** @type {Map<string, Row[]>} */
    const byHost = new Map();
    for (const r of shown) {
      if (!byHost.has(r.host)) byHost.set(r.host, []);
      /** @type {Row[]} */ (byHost.get(r.host)).push(r);
    }
    const hostNames = hosts.map((h) => h.host).filter((n) => !f.host.length || f.host.includes(n));
    const { keys: hostKeys } = this.hostOrder.order(hostNames, ctx.held);
    const sections = [];
    const liveRows = new Set();
    for (const name of hostKeys) {
      const h = hostsByName.get(name);
      const part = this.hostPart(name);
      if (h) this.fillHostHeader(part, h, ctx);
      const hostRows = byHost.get(name) ?? [];
      /** @type {Map<string, Map<string, Row>>} */
      const byServer = new Map();
      for (const r of hostRows) {
        if (!byServer.has(r.server)) byServer.set(r.server, new Map());
        /** @type {Map<string, Row>} */ (byServer.get(r.server)).set(rowKey(r), r);
      }
      const serverNames = (Array.isArray(h?.servers) ? h.servers.map((s) => s.server) : []).filter((s) => byServer.has(s));
      for (const s of byServer.keys()) if (!serverNames.includes(s)) serverNames.push(s);
      const lines = [];
      for (const s of serverNames) {
        const sk = `${name}\u0000${s}`;
        lines.push(this.serverLine(sk, s));
        if (!this.serverOrders.has(sk)) this.serverOrders.set(sk, new OrderKeeper());
        const serverRows = /** @type {Map<string, Row>} */ (byServer.get(s));
        const { keys } = /** @type {OrderKeeper} */ (this.serverOrders.get(sk)).order([...serverRows.keys()], ctx.held);
        lines.push(...this.placeRows(keys, serverRows, this.fleetEls, false, () => h, ctx, allByKey));
        for (const k of keys) if (this.fleetEls.has(k)) liveRows.add(k);
      }
      arrange(part.list, lines, animate);
      setHidden(part.empty, lines.length !== 0);
      sections.push(part.section);
    }
    arrange(this.p.hosts, sections, false);
    for (const k of [...this.fleetEls.keys()]) if (!liveRows.has(k)) this.fleetEls.delete(k);
    setHidden(this.p.emptyFleet, hosts.length > 0);
    return { needsCount: rows.filter((r) => classOf(r) === 'blocked' || classOf(r) === 'done').length };
  }

  /**
   * The elements for `keys` in order: live rows filled in, held leavers greyed in their place.
   * @param {readonly string[]} keys
   * @param {Map<string, Row>} live
   * @param {Map<string, RowEl>} els
   * @param {boolean} needs
   * @param {(r: Row) => Host | undefined} hostOf
   * @param {DrawContext} ctx
   * @param {Map<string, Row>} allByKey
   * @returns {RowEl[]}
   */
  placeRows(keys, live, els, needs, hostOf, ctx, allByKey) {
    const out = [];
    for (const k of keys) {
      const r = live.get(k);
      let e = els.get(k);
      if (!r) {
        // Kept in place during a hold: greyed, its buttons dead, its text as last drawn.
        if (e) {
          this.markLeft(e, allByKey.get(k));
          out.push(e);
        }
        continue;
      }
      if (!e) {
        e = this.rowEl(needs);
        els.set(k, e);
      }
      if (e.left) {
        e.left = false;
        e.classList.remove('left');
        // markLeft rewrote its state and disabled its buttons: everything is drawn again.
        e.drawn = null;
        e.actionSig = null;
      }
      this.fillRow(e, r, hostOf(r), ctx, needs);
      out.push(e);
    }
    return out;
  }

  /**
   * @param {readonly Row[]} rows
   * @param {import('./format.js').PageFilters} f
   */
  renderCounts(rows, f) {
    const counts = countClasses(rows);
    if (!this.chips) {
      /** @type {Map<StateClass, HTMLButtonElement> | undefined} */
      this.chips = new Map();
      for (const c of CLASSES) {
        const chip = el('button', `chip cls-${c}`);
        chip.type = 'button';
        chip.dataset.class = c;
        chip.append(el('span', 'glyph', GLYPH[c]), el('span', 'n', '0'), el('span', 'label', c));
        chip.addEventListener('click', () => this.onFilterState(c));
        this.chips.set(c, chip);
      }
      this.p.counts.replaceChildren(...this.chips.values());
    }
    for (const c of CLASSES) {
      // Made above for every class.
      const chip = /** @type {HTMLButtonElement} */ (this.chips.get(c));
      setText(/** @type {HTMLElement} */ (chip.children[1]), String(counts[c]));
      const on = f.state.includes(c);
      setAttr(chip, 'aria-pressed', String(on));
      setAttr(chip, 'aria-label', `${counts[c]} ${c}${on ? ', shown only' : ''}: show only ${c}`);
    }
  }

  /**
   * @param {string} name
   * @returns {HostPart}
   */
  hostPart(name) {
    let part = this.hostParts.get(name);
    if (part) return part;
    const section = el('section', 'host');
    section.dataset.host = name;
    const head = el('header', 'host-head');
    const title = el('h3', 'host-name', name);
    const status = el('span', 'host-status');
    const meta = el('span', 'host-meta');
    head.append(title, status, meta);
    const list = el('div', 'list fleet');
    list.setAttribute('role', 'list');
    const empty = el('p', 'empty', 'no agents');
    section.append(head, list, empty);
    part = { section, status, meta, list, empty };
    this.hostParts.set(name, part);
    return part;
  }

  /**
   * @param {HostPart} part
   * @param {Host} h
   * @param {DrawContext} ctx
   */
  fillHostHeader(part, h, ctx) {
    const down = h.stale === true || h.reachable !== true;
    const lost = h.reason === 'lost';
    if (part.section.classList.contains('stale') !== down) part.section.classList.toggle('stale', down);
    setData(part.section, 'status', lost ? 'lost' : down ? 'stale' : 'live');
    let status;
    if (h.reachable && !h.stale) status = 'connected';
    else if (h.reachable) status = 'syncing';
    else if (h.last_seen_ms == null) status = 'never connected';
    else status = `${lost ? 'lost' : 'stale'} · last seen ${shortDuration(ctx.hubNow - h.last_seen_ms)} ago`;
    if (!h.reachable && h.reason && h.reason !== 'lost') status += ` · ${h.reason}`;
    setText(part.status, status);
    const bits = [];
    if (h.transport) bits.push(`via ${h.transport}`);
    if (h.collector_version) bits.push(`collector ${h.collector_version}`);
    if (typeof h.clock_offset_ms === 'number' && Math.abs(h.clock_offset_ms) >= 2000)
      bits.push(`clock ${h.clock_offset_ms > 0 ? '+' : '−'}${shortDuration(Math.abs(h.clock_offset_ms))}`);
    setText(part.meta, bits.join(' · '));
  }

  /**
   * @param {string} key
   * @param {string} server
   * @returns {HTMLDivElement}
   */
  serverLine(key, server) {
    let line = this.serverLines.get(key);
    if (!line) {
      line = el('div', 'server-line');
      line.setAttribute('role', 'listitem');
      line.append(el('span', 'server-name'), el('span', 'server-path'));
      this.serverLines.set(key, line);
    }
    setText(/** @type {HTMLElement} */ (line.children[0]), serverLabel(server));
    setText(/** @type {HTMLElement} */ (line.children[1]), server);
    return line;
  }

  /**
   * @param {boolean} needs
   * @returns {RowEl}
   */
  rowEl(needs) {
    const e = /** @type {RowEl} */ (el('div', 'agent-row'));
    e.setAttribute('role', 'listitem');
    const names = needs
      ? ['state', 'agent', 'host', 'where', 'repo', 'age', 'detail', 'actions', 'outcome']
      : ['state', 'agent', 'where', 'detail', 'age', 'repo', 'actions', 'outcome'];
    /** @type {Record<string, HTMLElement>} */
    const made = {};
    for (const c of names) e.append((made[c] = el('div', `c-${c}`)));
    made.where.append(el('span', 'locator'), el('span', 'pane'));
    // Only fleet rows lack a host cell: the needs list names the host, a host's own list does not.
    e.cells = { .../** @type {RowCells} */ (/** @type {unknown} */ (made)), host: made.host ?? null };
    e.actionSig = null;
    e.row = null;
    e.offered = [];
    e.drawn = null;
    e.left = false;
    return e;
  }

  /**
   * @param {RowEl} e
   * @param {Row} r
   * @param {Host | undefined} h
   * @param {DrawContext} ctx
   * @param {boolean} needs
   */
  fillRow(e, r, h, ctx, needs) {
    const cls = classOf(r);
    const act = ctx.acts.get(rowKey(r));
    const d = e.drawn;
    // The mirror hands on the very object of a row nothing changed in: only its age moves on.
    if (!d || d.row !== r || d.host !== h || d.act !== act || d.role !== ctx.role) {
      e.drawn = { row: r, host: h, act, role: ctx.role };
      this.fillFields(e, r, h, cls, needs);
      this.fillActions(e, r, h, ctx, needs);
    }
    const ms = ageMs(r, h, ctx.hubNow);
    const age = e.cells.age;
    setText(age, ms === null ? '' : `${r.stale ? '≥ ' : ''}${shortDuration(ms)}`);
    // Whole seconds: the age shown moves no faster, and a value new every frame is a write every frame.
    setData(age, 'ms', ms === null ? '' : String(Math.floor(ms / 1000) * 1000));
    const title = ms === null ? '' : `${cls} for ${shortDuration(ms)}`;
    if (age.title !== title) age.title = title;
  }

  /**
   * Everything of a row but its age and buttons, each cell written only when it differs.
   * @param {RowEl} e
   * @param {Row} r
   * @param {Host | undefined} h
   * @param {import('./format.js').StateClass} cls
   * @param {boolean} needs
   */
  fillFields(e, r, h, cls, needs) {
    const stale = Boolean(r.stale);
    const was = dataOf(e, 'class');
    if (was !== cls) {
      if (was) e.classList.remove(`cls-${was}`);
      e.classList.add(`cls-${cls}`);
    }
    if (e.classList.contains('stale') !== stale) e.classList.toggle('stale', stale);
    setData(e, 'pane', r.pane);
    setData(e, 'host', r.host);
    setData(e, 'class', cls);
    setData(e, 'episode', String(r.episode_ms));

    const state = e.cells.state;
    if (dataOf(state, 'cls') !== cls || dataOf(state, 'stale') !== String(stale)) {
      setData(state, 'cls', cls);
      setData(state, 'stale', String(stale));
      state.replaceChildren(el('span', 'glyph', GLYPH[cls]), el('span', 'state-name', cls));
      if (stale) state.append(el('span', 'tag', 'stale'));
    } else {
      // markLeft may have said "now …" here.
      setText(/** @type {HTMLElement} */ (state.children[1]), cls);
    }
    const mutedTag = state.querySelector('.muted');
    if (r.muted && !mutedTag) state.append(el('span', 'tag muted', 'muted'));
    if (!r.muted && mutedTag) mutedTag.remove();

    setText(e.cells.agent, String(r.agent ?? ''));
    if (e.cells.host) setText(e.cells.host, String(r.host ?? ''));
    setText(/** @type {HTMLElement} */ (e.cells.where.children[0]), String(r.locator ?? ''));
    setText(/** @type {HTMLElement} */ (e.cells.where.children[1]), String(r.pane ?? ''));
    setText(e.cells.detail, needs ? askText(r, h) : [detailWord(r, h), r.pending_tool].filter((x) => typeof x === 'string' && x).join(' · '));
    setText(e.cells.repo, r.repo ? (r.branch ? `${r.repo} @ ${r.branch}` : String(r.repo)) : '');
  }

  /**
   * A row that left the list but is held in place: readable, greyed, nothing to press.
   * @param {RowEl} e
   * @param {Row | undefined} now
   */
  markLeft(e, now) {
    e.left = true;
    e.classList.add('left');
    for (const b of e.querySelectorAll('button')) b.disabled = true;
    if (now) {
      const name = e.cells.state.querySelector('.state-name');
      if (name) setText(/** @type {HTMLElement} */ (name), `now ${classOf(now)}`);
    }
  }

  /**
   * @param {RowEl} e
   * @param {Row} r
   * @param {Host | undefined} h
   * @param {DrawContext} ctx
   * @param {boolean} needs
   */
  fillActions(e, r, h, ctx, needs) {
    const key = rowKey(r);
    const act = ctx.acts.get(key);
    // Prompts are answered from the needs-you list only: one Approve per pane on the page.
    const offered = rowActions(r, h, ctx.role).filter((a) => needs || (a !== 'approve' && a !== 'deny'));
    // A button acts on the row as last drawn: what the person is looking at when they press it.
    e.row = r;
    e.offered = offered;
    // While an act is out (or its answer is on show), the buttons it concerned stay put.
    const showing = act ? [...new Set([...offered, ...(act.offered ?? [])])] : offered;
    const sig = JSON.stringify([showing, offered, r.episode_ms, r.prompt_id ?? null, r.agent, r.locator, act ?? null]);
    if (e.actionSig === sig) return;
    e.actionSig = sig;
    // A prompt this page already answered is not offered again while the screen catches up.
    const answered = Boolean(act && !act.pending && act.exit_code === 0 && act.episode === r.episode_ms && act.prompt === (r.prompt_id ?? null));
    const cell = e.cells.actions;
    const parts = [];
    for (const a of showing) {
      const b = el('button', `act act-${a}`, act?.pending && act.action === a ? PENDING_LABEL[a] : ACTION_VERB[a]);
      b.type = 'button';
      b.dataset.action = a;
      b.setAttribute('aria-label', actionLabel(a, r));
      b.disabled = Boolean(act?.pending) || answered || !offered.includes(a);
      b.addEventListener('click', () => this.onAction(/** @type {Row} */ (e.row), a, e.offered));
      parts.push(b);
    }
    if (needs && parts.length === 0 && ctx.role === 'operator' && classOf(r) === 'blocked') {
      // Say why there is nothing to press, so nobody hunts for a button that will not come.
      parts.push(el('span', 'no-act', r.stale ? 'host unreachable' : 'answer at the terminal'));
    }
    cell.replaceChildren(...parts);
    // Rows with buttons keep a line for the answer (page.css): a class, where `:has()` would make
    // the browser re-match every row on every change.
    e.classList.toggle(
      'has-buttons',
      parts.some((x) => x.tagName === 'BUTTON'),
    );
    const out = e.cells.outcome;
    if (act && !act.pending) {
      // Exit code 0 is the act result's own word for success (sent, replied, spawned).
      const good = act.exit_code === 0;
      const o = el('span', `outcome ${good ? 'good' : 'bad'}`, `${act.action}: ${act.outcome}${act.reason ? ` (${act.reason})` : ''}`);
      o.dataset.outcome = act.outcome;
      o.setAttribute('role', 'status');
      out.replaceChildren(o);
    } else {
      out.replaceChildren();
    }
  }
}
