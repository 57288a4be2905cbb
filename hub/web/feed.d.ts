// Types of the page's feed (feed.js runs in the browser as written).

export class Unauthorized extends Error {}

export interface FeedCallbacks {
  document(doc: { agents: unknown[]; hosts: unknown[]; [k: string]: unknown }): void;
  mode(m: 'live' | 'polling' | 'offline'): void;
  unauthorized(): void;
  clock(hubMsMinusBrowserMs: number): void;
}

export function startFeed(token: string, on: FeedCallbacks): () => void;
export function whoami(token: string): Promise<{ name: string; role: string }>;
export function fireAction(token: string, body: Record<string, unknown>): Promise<Record<string, unknown>>;
