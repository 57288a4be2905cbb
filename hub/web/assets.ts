// The fleet web page's files, served as they are written: no bundler, no framework, no CDN.
// The page carries no fleet data itself (it fetches everything with the reader's token), so these
// routes need no credential.
//
// The files live beside this module in the source tree. The compiled hub runs from dist/hub/web/,
// where tsc copies no .html/.css/.js, so the source folder is found from there as well.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';

interface WebAsset {
  type: string;
  body: string;
}

/** URL path → file in the page folder. Anything else is not served. */
const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/web/page.css': { file: 'page.css', type: 'text/css; charset=utf-8' },
  '/web/page.js': { file: 'page.js', type: 'text/javascript; charset=utf-8' },
  '/web/feed.js': { file: 'feed.js', type: 'text/javascript; charset=utf-8' },
  '/web/changes.js': { file: 'changes.js', type: 'text/javascript; charset=utf-8' },
  '/web/view.js': { file: 'view.js', type: 'text/javascript; charset=utf-8' },
  '/web/format.js': { file: 'format.js', type: 'text/javascript; charset=utf-8' },
  '/web/order.js': { file: 'order.js', type: 'text/javascript; charset=utf-8' },
  '/web/confirm.js': { file: 'confirm.js', type: 'text/javascript; charset=utf-8' },
  '/web/attention.js': { file: 'attention.js', type: 'text/javascript; charset=utf-8' },
  '/web/frame.js': { file: 'frame.js', type: 'text/javascript; charset=utf-8' },
  '/web/patch.js': { file: 'patch.js', type: 'text/javascript; charset=utf-8' },
  '/web/looking.js': { file: 'looking.js', type: 'text/javascript; charset=utf-8' },
  '/web/storage.js': { file: 'storage.js', type: 'text/javascript; charset=utf-8' },
};

/**
 * Only same-origin scripts, styles and requests; no inline script, so a row string that somehow
 * became markup still could not run. The page is never framed.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

function pageDir(): string {
  const candidates = [new URL('./', import.meta.url), new URL('../../../hub/web/', import.meta.url)];
  for (const c of candidates) {
    const dir = fileURLToPath(c);
    if (existsSync(`${dir}index.html`)) return dir;
  }
  throw new Error('the fleet web page files (hub/web/index.html) are missing from this installation');
}

/** Read every page file once; a missing file fails hub start, not a later request. */
export function loadWebAssets(): Map<string, WebAsset> {
  const dir = pageDir();
  const out = new Map<string, WebAsset>();
  for (const [path, f] of Object.entries(FILES)) out.set(path, { type: f.type, body: readFileSync(`${dir}${f.file}`, 'utf8') });
  return out;
}

/** Register `GET /` and the page's own files on the hub's router. */
export function mountWebPage(app: Hono, assets: Map<string, WebAsset> = loadWebAssets()): void {
  for (const [path, a] of assets) {
    app.get(path, (c) => c.body(a.body, 200, { 'content-type': a.type, ...SECURITY_HEADERS }));
  }
}
