// Draws fleet documents into the page. Every string that came from a row or a host goes in through
// textContent, never as markup. Elements are kept per host, server and row and updated in place,
// so a button under the pointer is not swapped out by the next document.

import { CLASSES, GLYPH, classOf, countClasses, rowActions, rowKey, serverLabel, shortDuration } from './format.js';

const COLUMNS = ['state', 'agent', 'where', 'detail', 'for', 'repo', ''];

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Put `wanted` into `parent` in this order, moving only what is out of place. */
function arrange(parent, wanted) {
  wanted.forEach((child, i) => {
    if (parent.children[i] !== child) parent.insertBefore(child, parent.children[i] ?? null);
  });
  while (parent.children.length > wanted.length) parent.lastElementChild.remove();
}

const ACTION_LABEL = { approve: 'Approve', deny: 'Deny', interrupt: 'Interrupt' };
const PENDING_LABEL = { approve: 'approving…', deny: 'denying…', interrupt: 'interrupting…' };

export class FleetView {
  /**
   * `root`: where host sections go; `countsEl`: the summary line. `onAction(row, action)` is
   * called when an operator clicks a button.
   */
  constructor(root, countsEl, onAction) {
    this.root = root;
    this.countsEl = countsEl;
    this.onAction = onAction;
    this.hosts = new Map();
    this.servers = new Map();
    this.rows = new Map();
    /** rowKey → { action, pending, outcome, reason, at } */
    this.acts = new Map();
  }

  /** A click was sent (`pending`) or answered. */
  noteAct(key, entry) {
    this.acts.set(key, entry);
  }

  /**
   * Draw `doc`. `ctx`: `{ role, hubNow, nowMono, ages }` — the hub's clock as estimated from
   * its Date headers (for "last seen", which is on the hub's clock), the browser's monotonic
   * clock, and the AgeBook for row ages.
   */
  render(doc, ctx) {
    const rows = Array.isArray(doc.agents) ? doc.agents : [];
    const hosts = Array.isArray(doc.hosts) ? doc.hosts.slice() : [];
    for (const r of rows) if (!hosts.some((h) => h.host === r.host)) hosts.push({ host: r.host, reachable: false, stale: true, servers: [] });

    this.renderCounts(rows);

    const byHost = new Map();
    for (const r of rows) {
      if (!byHost.has(r.host)) byHost.set(r.host, []);
      byHost.get(r.host).push(r);
    }

    const liveHosts = new Set();
    const liveServers = new Set();
    const liveRows = new Set();
    const sections = [];
    for (const h of hosts) {
      liveHosts.add(h.host);
      const part = this.hostPart(h);
      this.fillHostHeader(part, h, ctx);
      const hostRows = byHost.get(h.host) ?? [];
      // Servers in the host's own order, then any only rows mention; rows keep fleet order.
      const serverNames = (Array.isArray(h.servers) ? h.servers.map((s) => s.server) : []).filter((s) => hostRows.some((r) => r.server === s));
      for (const r of hostRows) if (!serverNames.includes(r.server)) serverNames.push(r.server);
      const lines = [];
      for (const s of serverNames) {
        const sk = `${h.host}\u0000${s}`;
        liveServers.add(sk);
        lines.push(this.serverLine(sk, s));
        for (const r of hostRows.filter((x) => x.server === s)) {
          const k = rowKey(r);
          liveRows.add(k);
          const tr = this.rowLine(k);
          this.fillRow(tr, r, h, ctx);
          lines.push(tr);
        }
      }
      arrange(part.tbody, lines);
      part.table.hidden = lines.length === 0;
      part.empty.hidden = lines.length !== 0;
      sections.push(part.section);
    }
    arrange(this.root, sections);

    for (const k of [...this.hosts.keys()]) if (!liveHosts.has(k)) this.hosts.delete(k);
    for (const k of [...this.servers.keys()]) if (!liveServers.has(k)) this.servers.delete(k);
    for (const k of [...this.rows.keys()]) if (!liveRows.has(k)) this.rows.delete(k);
  }

  renderCounts(rows) {
    const counts = countClasses(rows);
    const chips = CLASSES.map((c) => {
      const chip = el('span', `chip cls-${c}`);
      chip.dataset.class = c;
      chip.append(el('span', 'glyph', GLYPH[c]), el('span', 'n', String(counts[c])), el('span', 'label', c));
      return chip;
    });
    this.countsEl.replaceChildren(...chips);
  }

  hostPart(h) {
    let part = this.hosts.get(h.host);
    if (part) return part;
    const section = el('section', 'host');
    const head = el('header', 'host-head');
    const name = el('h2', 'host-name');
    const status = el('span', 'host-status');
    const meta = el('span', 'host-meta');
    head.append(name, status, meta);
    const table = el('table', 'rows');
    const thead = el('thead');
    const hr = el('tr');
    for (const c of COLUMNS) hr.append(el('th', null, c));
    thead.append(hr);
    const tbody = el('tbody');
    table.append(thead, tbody);
    const empty = el('p', 'empty', 'no agents');
    section.append(head, table, empty);
    part = { section, name, status, meta, table, tbody, empty };
    this.hosts.set(h.host, part);
    return part;
  }

  fillHostHeader(part, h, ctx) {
    const stale = h.stale === true || h.reachable !== true;
    part.section.classList.toggle('stale', stale);
    part.section.dataset.host = h.host;
    part.name.textContent = h.host;
    let status;
    if (h.reachable && !h.stale) status = 'connected';
    else if (h.reachable) status = 'syncing';
    else if (h.last_seen_ms == null) status = 'never connected';
    else status = `last seen ${shortDuration(ctx.hubNow - h.last_seen_ms)} ago`;
    if (!h.reachable && h.reason) status += ` · ${h.reason}`;
    part.status.textContent = status;
    const bits = [];
    if (h.transport) bits.push(`via ${h.transport}`);
    if (h.collector_version) bits.push(`collector ${h.collector_version}`);
    part.meta.textContent = bits.join(' · ');
  }

  serverLine(key, server) {
    let tr = this.servers.get(key);
    if (!tr) {
      tr = el('tr', 'server-line');
      const td = el('td');
      td.colSpan = COLUMNS.length;
      td.append(el('span', 'server-name'), el('span', 'server-path'));
      tr.append(td);
      this.servers.set(key, tr);
    }
    const [name, path] = tr.firstElementChild.children;
    name.textContent = serverLabel(server);
    path.textContent = server;
    return tr;
  }

  rowLine(key) {
    let tr = this.rows.get(key);
    if (!tr) {
      tr = el('tr', 'agent-row');
      for (const c of ['state', 'agent', 'where', 'detail', 'age', 'repo', 'actions']) tr.append(el('td', `c-${c}`));
      tr.actionSig = null;
      this.rows.set(key, tr);
    }
    return tr;
  }

  fillRow(tr, r, h, ctx) {
    const cls = classOf(r);
    const [state, agent, where, detail, age, repo, actions] = tr.children;
    tr.className = `agent-row cls-${cls}${r.stale ? ' stale' : ''}`;
    tr.dataset.pane = r.pane;
    tr.dataset.class = cls;

    if (state.dataset.cls !== cls) {
      state.dataset.cls = cls;
      state.replaceChildren(el('span', 'glyph', GLYPH[cls]), el('span', 'state-name', cls));
    }
    let stateExtra = state.querySelector('.muted');
    if (r.muted && !stateExtra) state.append(el('span', 'muted', 'muted'));
    if (!r.muted && stateExtra) stateExtra.remove();

    agent.textContent = String(r.agent ?? '');
    if (where.childElementCount !== 2) where.replaceChildren(el('span', 'locator'), el('span', 'pane'));
    where.children[0].textContent = String(r.locator ?? '');
    where.children[1].textContent = String(r.pane ?? '');

    detail.textContent = [r.detail, r.pending_tool].filter((x) => typeof x === 'string' && x).join(' · ');

    const ms = ctx.ages.ageMs(r, ctx.nowMono);
    age.textContent = ms === null ? '' : `${r.stale ? '≥ ' : ''}${shortDuration(ms)}`;

    const repoText = r.repo ? (r.branch ? `${r.repo} @ ${r.branch}` : String(r.repo)) : '';
    repo.textContent = repoText;

    this.fillActions(tr, actions, r, h, ctx);
  }

  fillActions(tr, cell, r, h, ctx) {
    const key = rowKey(r);
    let act = this.acts.get(key);
    if (act && !act.pending && ctx.nowMono - act.at > 60_000) {
      this.acts.delete(key);
      act = undefined;
    }
    const offered = rowActions(r, h, ctx.role);
    const sig = JSON.stringify([offered, r.episode_ms, act ?? null]);
    if (tr.actionSig === sig) return;
    tr.actionSig = sig;
    const parts = [];
    for (const a of offered) {
      const b = el('button', `act act-${a}`, act?.pending && act.action === a ? PENDING_LABEL[a] : ACTION_LABEL[a]);
      b.type = 'button';
      b.dataset.action = a;
      b.disabled = Boolean(act?.pending);
      b.addEventListener('click', () => this.onAction(r, a));
      parts.push(b);
    }
    if (act && !act.pending) {
      // Exit code 0 is the act result's own word for success (sent, replied, spawned).
      const good = act.exit_code === 0;
      const out = el('span', `outcome ${good ? 'good' : 'bad'}`, `${act.action}: ${act.outcome}${act.reason ? ` (${act.reason})` : ''}`);
      out.dataset.outcome = act.outcome;
      parts.push(out);
    }
    cell.replaceChildren(...parts);
  }
}
