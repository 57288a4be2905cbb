// The hubs a collector may publish to, in the order it tries them. Like Netdata's parents: it
// stays on the hub that works and moves to the next only when its link fails or is refused, so
// a fleet of hubs shares collectors without any of them having to ask the others. A hub may name
// its peers in its welcome; those join the end of the list, after everything given by hand.

/** `ws://host:port` and `ws://host:port/` mean the collect endpoint; any other path is kept. */
export function collectUrl(hub: string): string {
  let u: URL;
  try {
    u = new URL(hub);
  } catch {
    throw new Error(`--hub ${JSON.stringify(hub)} is not a URL (want ws://HOST:PORT)`);
  }
  if (u.protocol === 'http:' || u.protocol === 'https:') {
    throw new Error(`a collector dials the hub over WebSocket: --hub ${u.protocol === 'https:' ? 'wss' : 'ws'}://${u.host} (same host and port)`);
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') throw new Error(`--hub must be a ws:// or wss:// URL, not ${u.protocol}`);
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/v1/collect';
  return u.toString();
}

/** `--hub ws://a:7480,ws://b:7480`: each entry a collect URL, duplicates dropped, order kept. */
export function parseHubList(text: string): string[] {
  const parts = text.split(',').map((s) => s.trim());
  if (parts.some((s) => s === '')) throw new Error(`--hub ${JSON.stringify(text)} has an empty entry (want ws://A:PORT,ws://B:PORT)`);
  return [...new Set(parts.map(collectUrl))];
}

/** The `hubs` a welcome frame names, if it is one and names any (the publisher validates the frame itself). */
export function welcomeHubs(text: string): string[] {
  if (!text.startsWith('{"type":"welcome"') || !text.includes('"hubs"')) return [];
  try {
    const f = JSON.parse(text) as { hubs?: unknown };
    return Array.isArray(f.hubs) ? f.hubs.filter((h): h is string => typeof h === 'string') : [];
  } catch {
    return [];
  }
}

export class HubList {
  private readonly urls: string[];
  private at = 0;

  constructor(urls: readonly string[]) {
    if (urls.length === 0) throw new Error('a collector needs at least one hub');
    this.urls = [...urls];
  }

  get current(): string {
    return this.urls[this.at]!;
  }

  get size(): number {
    return this.urls.length;
  }

  get all(): readonly string[] {
    return this.urls;
  }

  /** Move to the next hub; true when that wraps round to the first (a whole round has failed). */
  advance(): boolean {
    this.at = (this.at + 1) % this.urls.length;
    return this.at === 0;
  }

  /**
   * Add the hubs a welcome named that are not known yet, at the end: the order given by hand
   * comes first. A URL that is not ws:// or wss:// is ignored. Returns what was added.
   */
  learn(named: readonly string[]): string[] {
    const added: string[] = [];
    for (const n of named) {
      let url: string;
      try {
        url = collectUrl(n);
      } catch {
        continue;
      }
      if (this.urls.includes(url)) continue;
      this.urls.push(url);
      added.push(url);
    }
    return added;
  }
}
