// Draws fleet documents into the page: the "needs you" list first, then every host's agents.
// Every string that came from a row or a host goes in through textContent, never as markup.
// Elements are kept per row and updated in place, and each list's order is held still while a
// person is about to tap it (see order.js), so a button under a finger is never swapped for
// another agent's.

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
/** A row's element, and the action buttons it was last drawn with (so unchanged ones are kept). @typedef {HTMLDivElement & { actionSig?: string | null }} RowEl */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

const reducedMotion = () => window.matchMedia?.('(prefers-reduced-motion: reduce)').matches === true;

/**
 * Put `wanted` into `parent` in this order, moving only what is out of place. Elements that end up
 * somewhere else on screen glide there, so a re-sort is seen rather than a jump.
 * @param {HTMLElement} parent
 * @param {readonly HTMLElement[]} wanted
 * @param {boolean} animate
 */
function arrange(parent, wanted, animate) {
  const before = animate ? new Map(wanted.map((c) => [c, c.isConnected ? c.getBoundingClientRect().top : null])) : null;
  wanted.forEach((child, i) => {
    if (parent.children[i] !== child) parent.insertBefore(child, parent.children[i] ?? null);
  });
  while (parent.children.length > wanted.length) /** @type {Element} */ (parent.lastElementChild).remove();
  if (!before || reducedMotion()) return;
  for (const c of wanted) {
    const was = before.get(c);
    if (was === null || was === undefined) continue;
    const dy = was - c.getBoundingClientRect().top;
    if (Math.abs(dy) < 1) continue;
    c.animate?.([{ transform: `translateY(${dy}px)` }, { transform: 'none' }], { duration: 350, easing: 'ease-out' });
    c.classList.add('moved');
    setTimeout(() => c.classList.remove('moved'), 900);
  }
}

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
    for (const r of rows) if (!hosts.some((h) => h.host === r.host)) hosts.push({ host: r.host, reachable: false, stale: true, servers: [] });
    const hostsByName = new Map(hosts.map((h) => [h.host, h]));
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
    for (const k of [...this.needsEls.keys()]) if (!needKeys.includes(k)) this.needsEls.delete(k);
    arrange(this.p.needsList, needEls, animate);
    this.p.needsEmpty.hidden = needEls.length > 0;
    this.p.needsCount.textContent = String(needs.length);

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
      const serverNames = (Array.isArray(h?.servers) ? h.servers.map((s) => s.server) : []).filter((s) => hostRows.some((r) => r.server === s));
      for (const r of hostRows) if (!serverNames.includes(r.server)) serverNames.push(r.server);
      const lines = [];
      for (const s of serverNames) {
        const sk = `${name}\u0000${s}`;
        lines.push(this.serverLine(sk, s));
        if (!this.serverOrders.has(sk)) this.serverOrders.set(sk, new OrderKeeper());
        const serverRows = new Map(hostRows.filter((x) => x.server === s).map((x) => [rowKey(x), x]));
        const { keys } = /** @type {OrderKeeper} */ (this.serverOrders.get(sk)).order([...serverRows.keys()], ctx.held);
        lines.push(...this.placeRows(keys, serverRows, this.fleetEls, false, () => h, ctx, allByKey));
        for (const k of keys) if (this.fleetEls.has(k)) liveRows.add(k);
      }
      arrange(part.list, lines, animate);
      part.empty.hidden = lines.length !== 0;
      sections.push(part.section);
    }
    arrange(this.p.hosts, sections, false);
    for (const k of [...this.fleetEls.keys()]) if (!liveRows.has(k)) this.fleetEls.delete(k);
    this.p.emptyFleet.hidden = hosts.length > 0;
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
      e.classList.remove('left');
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
      /** @type {Element} */ (chip.querySelector('.n')).textContent = String(counts[c]);
      const on = f.state.includes(c);
      chip.setAttribute('aria-pressed', String(on));
      chip.setAttribute('aria-label', `${counts[c]} ${c}${on ? ', shown only' : ''}: show only ${c}`);
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
    part.section.classList.toggle('stale', down);
    part.section.dataset.status = lost ? 'lost' : down ? 'stale' : 'live';
    let status;
    if (h.reachable && !h.stale) status = 'connected';
    else if (h.reachable) status = 'syncing';
    else if (h.last_seen_ms == null) status = 'never connected';
    else status = `${lost ? 'lost' : 'stale'} · last seen ${shortDuration(ctx.hubNow - h.last_seen_ms)} ago`;
    if (!h.reachable && h.reason && h.reason !== 'lost') status += ` · ${h.reason}`;
    part.status.textContent = status;
    const bits = [];
    if (h.transport) bits.push(`via ${h.transport}`);
    if (h.collector_version) bits.push(`collector ${h.collector_version}`);
    if (typeof h.clock_offset_ms === 'number' && Math.abs(h.clock_offset_ms) >= 2000)
      bits.push(`clock ${h.clock_offset_ms > 0 ? '+' : '−'}${shortDuration(Math.abs(h.clock_offset_ms))}`);
    part.meta.textContent = bits.join(' · ');
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
    line.children[0].textContent = serverLabel(server);
    line.children[1].textContent = server;
    return line;
  }

  /**
   * @param {boolean} needs
   * @returns {RowEl}
   */
  rowEl(needs) {
    /** @type {RowEl} */
    const e = el('div', 'agent-row');
    e.setAttribute('role', 'listitem');
    const cells = needs
      ? ['state', 'agent', 'host', 'where', 'repo', 'age', 'detail', 'actions', 'outcome']
      : ['state', 'agent', 'where', 'detail', 'age', 'repo', 'actions', 'outcome'];
    for (const c of cells) e.append(el('div', `c-${c}`));
    e.actionSig = null;
    return e;
  }

  /**
   * A row's cell. rowEl made every cell of its list; only `host` is missing from fleet rows, and
   * fillRow checks for it.
   * @param {RowEl} e
   * @param {string} name
   * @returns {HTMLElement}
   */
  cell(e, name) {
    return /** @type {HTMLElement} */ (e.querySelector(`:scope > .c-${name}`));
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
    e.className = `agent-row cls-${cls}${r.stale ? ' stale' : ''}`;
    e.dataset.pane = r.pane;
    e.dataset.host = r.host;
    e.dataset.class = cls;
    e.dataset.episode = String(r.episode_ms);

    const state = this.cell(e, 'state');
    if (state.dataset.cls !== cls || state.dataset.stale !== String(Boolean(r.stale))) {
      state.dataset.cls = cls;
      state.dataset.stale = String(Boolean(r.stale));
      state.replaceChildren(el('span', 'glyph', GLYPH[cls]), el('span', 'state-name', cls));
      if (r.stale) state.append(el('span', 'tag', 'stale'));
    }
    const mutedTag = state.querySelector('.muted');
    if (r.muted && !mutedTag) state.append(el('span', 'tag muted', 'muted'));
    if (!r.muted && mutedTag) mutedTag.remove();

    this.cell(e, 'agent').textContent = String(r.agent ?? '');
    const hostCell = this.cell(e, 'host');
    if (hostCell) hostCell.textContent = String(r.host ?? '');
    const where = this.cell(e, 'where');
    if (where.childElementCount !== 2) where.replaceChildren(el('span', 'locator'), el('span', 'pane'));
    where.children[0].textContent = String(r.locator ?? '');
    where.children[1].textContent = String(r.pane ?? '');

    this.cell(e, 'detail').textContent = needs ? askText(r, h) : [detailWord(r, h), r.pending_tool].filter((x) => typeof x === 'string' && x).join(' · ');

    const ms = ageMs(r, h, ctx.hubNow);
    const age = this.cell(e, 'age');
    age.textContent = ms === null ? '' : `${r.stale ? '≥ ' : ''}${shortDuration(ms)}`;
    age.dataset.ms = ms === null ? '' : String(ms);
    age.title = ms === null ? '' : `${cls} for ${shortDuration(ms)}`;

    this.cell(e, 'repo').textContent = r.repo ? (r.branch ? `${r.repo} @ ${r.branch}` : String(r.repo)) : '';

    this.fillActions(e, r, h, ctx, needs);
  }

  /**
   * A row that left the list but is held in place: readable, greyed, nothing to press.
   * @param {RowEl} e
   * @param {Row | undefined} now
   */
  markLeft(e, now) {
    e.classList.add('left');
    for (const b of e.querySelectorAll('button')) b.disabled = true;
    if (now) {
      const state = this.cell(e, 'state');
      const name = state.querySelector('.state-name');
      if (name) name.textContent = `now ${classOf(now)}`;
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
    // While an act is out (or its answer is on show), the buttons it concerned stay put.
    const showing = act ? [...new Set([...offered, ...(act.offered ?? [])])] : offered;
    const sig = JSON.stringify([showing, offered, r.episode_ms, r.agent, r.locator, act ?? null]);
    if (e.actionSig === sig) return;
    e.actionSig = sig;
    // A prompt this page already answered is not offered again while the screen catches up.
    const answered = Boolean(act && !act.pending && act.exit_code === 0 && act.episode === r.episode_ms && act.prompt === (r.prompt_id ?? null));
    const cell = this.cell(e, 'actions');
    const parts = [];
    for (const a of showing) {
      const b = el('button', `act act-${a}`, act?.pending && act.action === a ? PENDING_LABEL[a] : ACTION_VERB[a]);
      b.type = 'button';
      b.dataset.action = a;
      b.setAttribute('aria-label', actionLabel(a, r));
      b.disabled = Boolean(act?.pending) || answered || !offered.includes(a);
      b.addEventListener('click', () => this.onAction(r, a, offered));
      parts.push(b);
    }
    if (needs && parts.length === 0 && ctx.role === 'operator' && classOf(r) === 'blocked') {
      // Say why there is nothing to press, so nobody hunts for a button that will not come.
      parts.push(el('span', 'no-act', r.stale ? 'host unreachable' : 'answer at the terminal'));
    }
    cell.replaceChildren(...parts);
    const out = this.cell(e, 'outcome');
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
