// The fleet page's entry: where the token comes from, who it belongs to, and wiring the feed to
// the view. The token arrives in the URL fragment (`#token=…`, which browsers never send to the
// server) or the sign-in form, is remembered on this device until "sign out", and is wiped from
// the address bar so it does not end up in history or in a shared screenshot.

import { filtersQuery, newSlot, parseFilters, rowKey } from './format.js';
import { Unauthorized, fireAction, startFeed, whoami } from './feed.js';
import { FleetView } from './view.js';
import { Hold } from './order.js';
import { Confirm } from './confirm.js';
import { Attention } from './attention.js';
import { perFrame } from './frame.js';
import { startLooking } from './looking.js';
import { forget, keep, recall } from './storage.js';

/** @typedef {import('./view.js').Row} Row */
/** @typedef {import('./view.js').FleetDoc} FleetDoc */
/** @typedef {import('./view.js').Act} Act */
/** @typedef {import('./view.js').ActResult} ActResult */

const TOKEN_KEY = 'tma-fleet-token';
/** @type {Record<string, string>} */
const MODE_TEXT = { live: 'live', polling: 'stream down — polling', offline: 'hub unreachable — retrying' };
/** An answer stays on its row this long. */
const OUTCOME_MS = 60_000;

/**
 * One of the page's own elements: every id asked for is in index.html.
 * @param {string} id
 */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

function tokenFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token');
  if (token === null) return;
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  if (token) keep(TOKEN_KEY, token);
}

/** @type {(() => void) | null} */
let stopFeed = null;
/** @type {(() => void) | null} */
let stopLooking = null;
/** @type {number | null} */
let ticker = null;
let filters = parseFilters(location.search);
const attention = new Attention();

/** @param {string} [message] */
function showLogin(message) {
  stopFeed?.();
  stopFeed = null;
  stopLooking?.();
  stopLooking = null;
  // Before the first sign-in there is no ticker: clearing null is a no-op.
  clearInterval(/** @type {number | undefined} */ (ticker));
  $('fleet').hidden = true;
  $('bar').hidden = true;
  $('counts').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message ?? '';
  /** @type {HTMLInputElement} */ ($('token-input')).value = '';
  document.title = 'tma fleet';
  $('token-input').focus();
}

/**
 * Keep a select's options to `values` (plus "all"), without disturbing the one in use.
 * @param {HTMLSelectElement} select
 * @param {readonly string[]} values
 * @param {readonly string[]} chosen
 */
function fillSelect(select, values, chosen) {
  const want = ['', ...[...new Set([...values, ...chosen])].sort()];
  const have = [...select.options].map((o) => o.value);
  if (JSON.stringify(want) !== JSON.stringify(have)) {
    select.replaceChildren(
      ...want.map((v) => {
        const o = document.createElement('option');
        o.value = v;
        o.textContent = v || 'all';
        return o;
      }),
    );
  }
  if (select.value !== (chosen[0] ?? '')) select.value = chosen[0] ?? '';
}

/** @param {string} token */
async function open(token) {
  /** @type {{ name: string; role: string }} */
  let me;
  try {
    me = await whoami(token);
  } catch (e) {
    if (e instanceof Unauthorized) {
      forget(TOKEN_KEY);
      showLogin('The hub refused that token.');
    } else {
      showLogin(`Cannot reach the hub (${e instanceof Error ? e.message : String(e)}).`);
    }
    return;
  }
  $('login').hidden = true;
  $('bar').hidden = false;
  $('counts').hidden = false;
  $('fleet').hidden = false;
  $('who').textContent = `${me.name} · ${me.role}`;
  document.body.dataset.role = me.role;
  stopLooking?.();
  stopLooking = startLooking(token);

  let skewMs = 0;
  /** @type {FleetDoc | null} */
  let last = null;
  /** @type {Map<string, Act>} */
  const acts = new Map();
  const hold = new Hold(3000);
  /** @type {number | null} */
  let settleTimer = null;

  const confirm = new Confirm(/** @type {HTMLDialogElement} */ ($('confirm')), (isOpen) => {
    hold.set('confirm', isOpen, performance.now());
    draw();
  });

  /**
   * @param {Row} row
   * @param {string} action
   * @param {string[]} offered
   */
  async function fire(row, action, offered) {
    const key = rowKey(row);
    const slot = newSlot();
    const shown = { episode: row.episode_ms, prompt: row.prompt_id ?? null };
    acts.set(key, { action, pending: true, offered, ...shown, at: performance.now() });
    hold.set(`act:${slot}`, true, performance.now());
    draw();
    // The binders: the host refuses if the prompt the person saw is no longer the one on screen.
    /** @type {Record<string, unknown>} */
    const body = { host: row.host, pane: row.pane, action, expect_episode_ms: row.episode_ms, slot };
    if (row.server) body.server = row.server;
    if (typeof row.permission_request === 'string' && row.permission_request) body.expect_permission_request = row.permission_request;
    // Sent only when the row names its prompt: a hub that predates prompt ids takes no unknown key.
    if (typeof row.prompt_id === 'string' && row.prompt_id) body.expect_prompt = row.prompt_id;
    const result = /** @type {ActResult} */ (await fireAction(token, body));
    acts.set(key, {
      action,
      pending: false,
      offered,
      ...shown,
      outcome: result.outcome,
      reason: result.reason ?? null,
      exit_code: result.exit_code,
      at: performance.now(),
    });
    hold.set(`act:${slot}`, false, performance.now());
    draw();
  }

  const view = new FleetView(
    {
      needsList: $('needs-list'),
      needsEmpty: $('needs-empty'),
      needsCount: $('needs-count'),
      hosts: $('hosts'),
      counts: $('counts'),
      emptyFleet: $('empty-fleet'),
    },
    (row, action, offered) => {
      hold.touch(performance.now());
      confirm.ask(
        row,
        action,
        (r, a) => void fire(r, a, offered),
        (last?.hosts ?? []).find((h) => h.host === row.host),
      );
    },
    (cls) => {
      filters.state = filters.state.includes(cls) ? filters.state.filter((c) => c !== cls) : [cls];
      applyFilters();
    },
  );

  function applyFilters() {
    history.replaceState(null, '', `${location.pathname}${filtersQuery(filters)}`);
    $('filter-clear').hidden = !filters.state.length && !filters.host.length && !filters.agent.length;
    draw();
  }

  // Stream lines may come faster than frames: each one updates `last`, the screen once a frame.
  const drawSoon = perFrame(() => draw());

  function draw() {
    drawSoon.cancel();
    if (!last) return;
    const now = performance.now();
    for (const [k, a] of acts) if (!a.pending && now - a.at > OUTCOME_MS) acts.delete(k);
    const held = hold.held(now);
    const rows = Array.isArray(last.agents) ? last.agents : [];
    const { needsCount } = view.render(last, { role: me.role, hubNow: Date.now() + skewMs, filters, held, acts });
    attention.observe(rows, needsCount, last.hosts ?? []);
    confirm.check(rows);
    fillSelect(
      /** @type {HTMLSelectElement} */ ($('filter-host')),
      (last.hosts ?? []).map((h) => h.host),
      filters.host,
    );
    fillSelect(
      /** @type {HTMLSelectElement} */ ($('filter-agent')),
      rows.map((r) => String(r.agent)),
      filters.agent,
    );
    // Settle as soon as the hold ends, not at the next tick.
    clearTimeout(/** @type {number | undefined} */ (settleTimer));
    if (held && hold.reasons.size === 0) settleTimer = setTimeout(draw, Math.max(0, hold.until - now) + 20);
  }

  // A finger on a list is about to tap something in it: keep the list still under it.
  for (const id of ['needs-list', 'hosts']) $(id).addEventListener('pointerdown', () => hold.touch(performance.now()));
  $('filter-host').onchange = (ev) => {
    filters.host = /** @type {HTMLSelectElement} */ (ev.target).value ? [/** @type {HTMLSelectElement} */ (ev.target).value] : [];
    applyFilters();
  };
  $('filter-agent').onchange = (ev) => {
    filters.agent = /** @type {HTMLSelectElement} */ (ev.target).value ? [/** @type {HTMLSelectElement} */ (ev.target).value] : [];
    applyFilters();
  };
  $('filter-clear').onclick = () => {
    filters = { state: [], host: [], agent: [] };
    applyFilters();
  };
  $('filter-clear').hidden = !filters.state.length && !filters.host.length && !filters.agent.length;

  const stopStream = startFeed(token, {
    document(doc) {
      // The hub's rows and hosts, as the view reads them.
      last = /** @type {FleetDoc} */ (doc);
      drawSoon.request();
    },
    mode(m) {
      // Said after every stream line: touching the text each time would cost a layout each time.
      if ($('mode').dataset.mode === m) return;
      $('mode').textContent = MODE_TEXT[m] ?? m;
      $('mode').dataset.mode = m;
    },
    unauthorized() {
      forget(TOKEN_KEY);
      showLogin('The hub no longer accepts this token.');
    },
    clock(ms) {
      skewMs = ms;
    },
  });
  stopFeed = () => {
    stopStream();
    drawSoon.stop();
  };
  // Ages and "last seen" move on between documents.
  ticker = setInterval(draw, 1000);
}

$('login-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const token = /** @type {HTMLInputElement} */ ($('token-input')).value.trim();
  if (!token) return;
  keep(TOKEN_KEY, token);
  void open(token);
});

$('sign-out').addEventListener('click', () => {
  forget(TOKEN_KEY);
  showLogin('Signed out: this device no longer keeps the token.');
});

const alertsButton = $('alerts');
const showAlerts = () => {
  alertsButton.textContent = attention.describe();
  alertsButton.setAttribute('aria-pressed', String(attention.on));
};
// The browser ignores a listener's promise; toggle() catches the permission prompt's refusal itself.
// eslint-disable-next-line @typescript-eslint/no-misused-promises
alertsButton.addEventListener('click', async () => {
  await attention.toggle();
  showAlerts();
});
document.addEventListener('pointerdown', () => attention.on && attention.unlockAudio(), { once: true });
showAlerts();

tokenFromFragment();
const saved = recall(TOKEN_KEY);
if (saved) void open(saved);
else showLogin();
