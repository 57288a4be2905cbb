// The fleet page's entry: where the token comes from, who it belongs to, and wiring the feed to
// the view. The token arrives in the URL fragment (`#token=…`, which browsers never send to the
// server), is kept for this tab only, and is wiped from the address bar so it does not end up in
// history or in a shared screenshot.

import { AgeBook, newSlot, rowKey } from './format.js';
import { Unauthorized, fireAction, startFeed, whoami } from './feed.js';
import { FleetView } from './view.js';

const TOKEN_KEY = 'tma-fleet-token';
const MODE_TEXT = { live: 'live', polling: 'stream down — polling', offline: 'hub unreachable — retrying' };

const $ = (id) => document.getElementById(id);

function tokenFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token');
  if (token === null) return;
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
}

let stopFeed = null;
let ticker = null;

function showLogin(message) {
  stopFeed?.();
  stopFeed = null;
  clearInterval(ticker);
  $('fleet').hidden = true;
  $('bar').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message ?? '';
  $('token-input').value = '';
  $('token-input').focus();
}

async function open(token) {
  let me;
  try {
    me = await whoami(token);
  } catch (e) {
    if (e instanceof Unauthorized) {
      sessionStorage.removeItem(TOKEN_KEY);
      showLogin('The hub refused that token.');
    } else {
      showLogin(`Cannot reach the hub (${e instanceof Error ? e.message : String(e)}).`);
    }
    return;
  }
  $('login').hidden = true;
  $('bar').hidden = false;
  $('fleet').hidden = false;
  $('who').textContent = `${me.name} · ${me.role}`;
  document.body.dataset.role = me.role;

  const ages = new AgeBook();
  let skewMs = 0;
  let last = null;
  const view = new FleetView($('hosts'), $('counts'), async (row, action) => {
    const key = rowKey(row);
    view.noteAct(key, { action, pending: true, at: performance.now() });
    draw();
    // The binders: the host refuses if the prompt the person saw is no longer the one on screen.
    const body = { host: row.host, pane: row.pane, action, expect_episode_ms: row.episode_ms, slot: newSlot() };
    if (row.server) body.server = row.server;
    if (typeof row.permission_request === 'string' && row.permission_request) body.expect_permission_request = row.permission_request;
    const result = await fireAction(token, body);
    view.noteAct(key, { action, pending: false, outcome: result.outcome, reason: result.reason ?? null, exit_code: result.exit_code, at: performance.now() });
    draw();
  });

  function draw() {
    if (!last) return;
    view.render(last, { role: me.role, hubNow: Date.now() + skewMs, nowMono: performance.now(), ages });
  }

  stopFeed = startFeed(token, {
    document(doc) {
      ages.observe(Array.isArray(doc.agents) ? doc.agents : [], performance.now());
      last = doc;
      $('empty-fleet').hidden = Array.isArray(doc.hosts) && doc.hosts.length > 0;
      draw();
    },
    mode(m) {
      $('mode').textContent = MODE_TEXT[m] ?? m;
      $('mode').dataset.mode = m;
    },
    unauthorized() {
      sessionStorage.removeItem(TOKEN_KEY);
      showLogin('The hub no longer accepts this token.');
    },
    clock(ms) {
      skewMs = ms;
    },
  });
  // Ages and "last seen" move on between documents.
  ticker = setInterval(draw, 1000);
}

$('login-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const token = $('token-input').value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  void open(token);
});

$('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showLogin();
});

tokenFromFragment();
const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) void open(saved);
else showLogin();
