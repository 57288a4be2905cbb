// The small page an action link shows in a browser: what it would do (with a button that POSTs
// it), what it did, or why it was refused. Everything from the link is escaped; no script.

import type { LinkClaim } from '../notify/action-link.js';

const esc = (v: unknown) => String(v ?? '').replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

export function linkPage(o: {
  error?: string;
  result?: { outcome?: unknown; reason?: unknown };
  claim: LinkClaim | null;
  token: string | null;
  /** `action_confirm = "device"`: no button; the answer is given from a signed-in fleet page. */
  needsDevice?: boolean;
}): string {
  const c = o.claim;
  const what = c ? `<p><b>${esc(c.action)}</b> on ${esc(c.host)} pane ${esc(c.pane)}</p>` : '';
  let main: string;
  if (o.error) main = `<p>Refused: ${esc(o.error)}. Nothing was sent.</p>`;
  else if (o.result) main = `<p>Outcome: ${esc(o.result.outcome)}${o.result.reason ? ` (${esc(o.result.reason)})` : ''}</p>`;
  else if (o.needsDevice) {
    const at = `/#host=${encodeURIComponent(c!.host)}&server=${encodeURIComponent(c!.server)}&pane=${encodeURIComponent(c!.pane)}`;
    main = `<p>Opening this link sent nothing. This hub asks for a signed-in device to confirm: answer from <a href="${esc(at)}">the fleet page</a> on a device signed in as an operator.</p>`;
  } else
    main = `<p>Opening this link sent nothing. The button sends this one answer, once (link good until ${esc(new Date(c!.expires_ms).toISOString())}).</p>
<form method="post" action="${esc(o.token)}"><button type="submit">${esc(c!.action)}</button></form>`;
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="referrer" content="no-referrer"><title>tma: ${esc(c?.action ?? 'link')}</title></head><body>${what}${main}</body></html>`;
}
