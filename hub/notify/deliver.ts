// How one grouped message reaches one sink. Each function resolves when the sink took it and
// throws (with a short reason, never a secret) when it did not, so the queue can retry.

import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import type { HubNotification } from './journal.js';
import type { ActionLink } from './action-link.js';
import type { NotifySinkConfig } from './sink-config.js';

export const HTTP_TIMEOUT_MS = 10_000;
export const COMMAND_TIMEOUT_MS = 30_000;
export const SIGNATURE_HEADER = 'x-tma-signature';

export interface Batch {
  /** Stable across retries of the same message, so a receiver can drop a repeat. */
  id: string;
  events: HubNotification[];
}

export interface DeliverContext {
  /** The base of every page link sent: hub.toml's public_url, else the hub's own address. */
  hubUrl: string;
  /** The answer links a blocked event offers `sink` (none without `actions`); minted per message. */
  links?: (sink: NotifySinkConfig, e: HubNotification) => ActionLink[];
}

export class DeliveryError extends Error {}

/** The fleet page opened at one pane. */
export function pageLink(pageBase: string, e: HubNotification): string {
  return `${pageBase.replace(/\/+$/, '')}/#${new URLSearchParams({ host: e.host, server: e.server, pane: e.pane }).toString()}`;
}

/** A message's one link target: the first event that waits for the person, else the first. */
const leadOf = (ev: HubNotification[]): HubNotification => ev.find((e) => e.trigger === 'blocked') ?? ev[0]!;

/** The JSON document webhook and command sinks receive; `page_url` opens the page at the lead event. */
export function batchDocument(
  sink: NotifySinkConfig,
  b: Batch,
  pageBase: string,
  links?: DeliverContext['links'],
): { schema: 1; sink: string; delivery: string; events: HubNotification[]; page_url: string; actions?: ActionLink[] } {
  const doc = { schema: 1 as const, sink: sink.name, delivery: b.id, events: sinkEvents(sink, b), page_url: pageLink(pageBase, leadOf(b.events)) };
  if (!sink.actions?.length || !links) return doc;
  // Each event carries its own answers; the document's `actions` are the lead's, for a bridge
  // that draws one row of buttons per message (only when one event is waiting, so never ambiguous).
  const events = doc.events.map((e) => ({ ...e, actions: links(sink, e) }));
  const waiting = events.filter((e) => e.trigger === 'blocked');
  return { ...doc, events, actions: waiting.length === 1 ? waiting[0]!.actions : [] };
}

/** What a prompt asks goes only to a sink that asked for it (`include_summary = true`). */
function sinkEvents(sink: Pick<NotifySinkConfig, 'includeSummary'>, b: Batch): HubNotification[] {
  return sink.includeSummary === true ? b.events : b.events.map((e) => (e.pending_summary === null ? e : { ...e, pending_summary: null }));
}

export async function deliver(sink: NotifySinkConfig, b: Batch, ctx: DeliverContext): Promise<void> {
  if (sink.kind === 'webhook') return webhook(sink, b, ctx);
  if (sink.kind === 'ntfy') return ntfy(sink, b, ctx);
  return command(sink, b, ctx);
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code;
    throw new DeliveryError(cause ?? (e as Error).name ?? 'request failed');
  }
  await res.arrayBuffer().catch(() => undefined);
  if (res.status < 200 || res.status >= 300) throw new DeliveryError(`HTTP ${res.status}`);
}

async function webhook(sink: NotifySinkConfig, b: Batch, ctx: DeliverContext): Promise<void> {
  const body = JSON.stringify(batchDocument(sink, b, ctx.hubUrl, ctx.links));
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-tma-delivery': b.id };
  if (sink.secret) headers[SIGNATURE_HEADER] = `sha256=${createHmac('sha256', sink.secret).update(body).digest('hex')}`;
  await post(sink.url!, body, headers);
}

/** Header values stay printable ASCII: ntfy reads them as such, and Node refuses the rest. */
const ascii = (s: string) => s.replace(/[^\x20-\x7e]/g, '?').slice(0, 250);

/**
 * Host data on one line: a control character (a newline above all) or a Unicode line or paragraph
 * separator from a host becomes a space, so one host cannot write lines that read as another's.
 */
const oneLine = (v: string | number | null | undefined): string => String(v ?? '').replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');

const PRIORITY: Record<string, number> = { blocked: 4, done: 3, context_high: 3 };

function verb(e: HubNotification): string {
  if (e.trigger === 'blocked') {
    const asked = e.pending_summary ?? e.pending_tool;
    return `is waiting for you${e.detail ? ` (${oneLine(e.detail)})` : ''}${asked ? `: ${oneLine(asked)}` : ''}`;
  }
  if (e.trigger === 'done') return 'finished';
  return `context is at ${e.context_pct ?? '?'}%`;
}

/** What an ntfy notification says, and where a tap on it leads. */
export function ntfyMessage(
  b: Batch,
  pageBase: string,
  sink: Pick<NotifySinkConfig, 'includeSummary'> = {},
): { title: string; body: string; priority: number; click: string; tags: string } {
  const ev = sinkEvents(sink, b);
  const first = ev[0]!;
  const where = (e: HubNotification) => `${oneLine(e.host)} ${oneLine(e.locator)}`;
  const at = (e: HubNotification) => pageLink(pageBase, e);
  const priority = Math.max(...ev.map((e) => PRIORITY[e.trigger] ?? 3));
  if (ev.length === 1) {
    return {
      title: `${oneLine(first.agent)} ${first.trigger} on ${oneLine(first.host)}`,
      body: `${where(first)}: ${oneLine(first.agent)} ${verb(first)}`,
      priority,
      click: at(first),
      tags: first.trigger,
    };
  }
  const blocked = ev.filter((e) => e.trigger === 'blocked').length;
  const title = blocked ? `${blocked} of ${ev.length} agents need you` : `${ev.length} agent notifications`;
  // One line per event, each naming its host: the lines are joined here and nowhere else.
  const body = ev.map((e) => `${where(e)}: ${oneLine(e.agent)} ${verb(e)}`).join('\n');
  return { title, body, priority, click: at(leadOf(ev)), tags: [...new Set(ev.map((e) => e.trigger))].join(',') };
}

/**
 * ntfy's `Actions` header: one `http` action per link, POSTed by the phone itself, and the
 * notification cleared once it was tapped. Only for a message with exactly one waiting event.
 */
export function ntfyActions(sink: NotifySinkConfig, b: Batch, links: DeliverContext['links']): string | null {
  if (!sink.actions?.length || !links) return null;
  const waiting = b.events.filter((e) => e.trigger === 'blocked');
  if (waiting.length !== 1) return null;
  const ls = links(sink, waiting[0]!);
  // A link that needs a signed-in device cannot fire from the phone's button: it opens its page.
  const act = (l: ActionLink) =>
    sink.actionConfirm === 'device'
      ? `view, ${l.label.replace(/[,;=]/g, ' ')}, ${l.url}`
      : `http, ${l.label.replace(/[,;=]/g, ' ')}, ${l.url}, method=POST, clear=true`;
  return ls.length ? ls.map(act).join('; ') : null;
}

async function ntfy(sink: NotifySinkConfig, b: Batch, ctx: DeliverContext): Promise<void> {
  const m = ntfyMessage(b, sink.pageUrl ?? ctx.hubUrl, sink);
  const actions = ntfyActions(sink, b, ctx.links);
  await post(sink.url!, m.body, {
    'content-type': 'text/plain; charset=utf-8',
    Title: ascii(m.title),
    Priority: String(m.priority),
    Tags: ascii(m.tags),
    Click: ascii(m.click),
    ...(actions ? { Actions: actions } : {}),
  });
}

function command(sink: NotifySinkConfig, b: Batch, ctx: DeliverContext): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', sink.command!], { stdio: ['pipe', 'ignore', 'ignore'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new DeliveryError(`spawn failed: ${e.message}`));
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new DeliveryError(signal ? `killed by ${signal}` : `exit ${code}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(`${JSON.stringify(batchDocument(sink, b, ctx.hubUrl))}\n`);
  });
}
