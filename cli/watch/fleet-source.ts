// A view's rows from a hub: its `/v1/subscribe?mode=changes` stream (a full document first, then
// only what moved), so the view does nothing at all while the fleet is still. Acts and jumps go
// through the command line against the same hub (`tma --hub … act|jump --host H …`), dialled with
// the flags the hub target itself gives (URL, token, CA or pin); screens stay on their hosts, so a
// fleet row has no preview.

import { randomBytes } from 'node:crypto';
import type { FleetDocument, FleetRow, HostStatus } from '../../shared/fleet.js';
import type { Parsed } from '../args.js';
import { hubTarget, selectorQuery, streamSse, type HubTarget } from '../fleet/hub-client.js';
import type { SELECTOR } from '../verb-flags.js';
import type { MenuItem } from './model.js';
import { fromFleet, hostTrouble, rowKey, type WatchRow } from './rows.js';
import { binderFlags, errorLine, outcomeWord, runTma, type Source } from './source.js';

interface Changes {
  type: 'changes';
  upserts?: FleetRow[];
  removals?: { host: string; server: string; pane: string }[];
  hosts?: HostStatus[];
  hosts_gone?: string[];
}

/** The fleet as the stream has described it so far (pure apart from its own maps). */
export class FleetCopy {
  readonly rows = new Map<string, FleetRow>();
  readonly hosts = new Map<string, HostStatus>();

  /** One stream payload; false when it was not one we understand (it is then ignored). */
  apply(data: string): boolean {
    let msg: (FleetDocument & { type?: undefined }) | Changes;
    try {
      msg = JSON.parse(data) as typeof msg;
    } catch {
      return false;
    }
    if (msg.type === undefined) {
      if (!Array.isArray(msg.agents)) return false;
      this.rows.clear();
      this.hosts.clear();
      for (const r of msg.agents) this.rows.set(rowKey(r.host, r.server, r.pane), r);
      for (const h of msg.hosts ?? []) this.hosts.set(h.host, h);
      return true;
    }
    if (msg.type !== 'changes') return false;
    for (const r of msg.removals ?? []) this.rows.delete(rowKey(r.host, r.server, r.pane));
    for (const r of msg.upserts ?? []) this.rows.set(rowKey(r.host, r.server, r.pane), r);
    for (const h of msg.hosts ?? []) this.hosts.set(h.host, h);
    for (const name of msg.hosts_gone ?? []) {
      this.hosts.delete(name);
      for (const [k, r] of this.rows) if (r.host === name) this.rows.delete(k);
    }
    return true;
  }

  view(): { rows: WatchRow[]; trouble: Map<string, string> } {
    const trouble = new Map<string, string>();
    for (const h of this.hosts.values()) {
      const t = hostTrouble(h);
      if (t !== null) trouble.set(h.host, t);
    }
    const rows = [...this.rows.values()].map((r) => {
      const h = this.hosts.get(r.host);
      return fromFleet(r, h?.clock_offset_ms ?? 0, h?.stale === true);
    });
    return { rows, trouble };
  }
}

export class FleetSource implements Source {
  readonly fleet = true;
  readonly label: string;
  private closed = false;
  private readonly copy = new FleetCopy();
  private readonly target: HubTarget;

  constructor(
    private readonly p: Parsed<typeof SELECTOR>,
    private readonly client: string | null,
  ) {
    this.target = hubTarget(p, process.env);
    this.label = `fleet at ${this.target.base.origin}`;
  }

  start(onRows: (rows: WatchRow[], trouble: Map<string, string>) => void): void {
    const q = selectorQuery(this.p);
    q.set('mode', 'changes');
    const loop = async () => {
      let backoff = 500;
      while (!this.closed) {
        let why = 'the hub closed the stream';
        try {
          await streamSse(this.target, '/v1/subscribe', q, (data) => {
            if (this.closed) return false;
            if (this.copy.apply(data)) {
              backoff = 500;
              const v = this.copy.view();
              onRows(v.rows, v.trouble);
            }
            return true;
          });
        } catch (e) {
          why = (e as Error).message;
        }
        if (this.closed) return;
        // Say so on screen, keep the last rows (marked stale: nothing confirms them now), retry.
        const v = this.copy.view();
        v.trouble.set('(hub)', `${why}; retrying`);
        onRows(
          v.rows.map((r) => ({ ...r, stale: true })),
          v.trouble,
        );
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 10_000);
      }
    };
    void loop();
  }

  preview(): Promise<string[] | null> {
    return Promise.resolve(null);
  }

  async act(action: string, row: WatchRow): Promise<string> {
    const slot = `watch-${randomBytes(9).toString('hex')}`;
    const res = await runTma([
      ...this.target.childFlags,
      'act',
      action,
      '--host',
      row.host,
      '--server',
      row.server,
      '--pane',
      row.pane,
      ...binderFlags(row, slot).filter((f) => f !== '--yes'),
    ]);
    return outcomeWord(res);
  }

  async jump(row: WatchRow): Promise<string | null> {
    // Pane ids repeat across one host's servers: the row's server names which pane this is.
    const where = ['--host', row.host, '--server', row.server, '--pane', row.pane];
    const res = await runTma([...this.target.childFlags, 'jump', ...where, ...(this.client ? ['--client', this.client] : [])], 20_000);
    return errorLine(res);
  }

  menu(row: WatchRow): Promise<MenuItem[]> {
    const allowed = this.copy.hosts.get(row.host)?.actions_allowed ?? [];
    const items: MenuItem[] = ['approve', 'deny', 'interrupt', 'compact'].map((a) => {
      let refusal: string | null = null;
      if (!allowed.includes(a)) refusal = `${row.host} does not let a hub fire it ([remote] allow_actions)`;
      else if (row.stale) refusal = `${row.host} is stale`;
      else if ((a === 'approve' || a === 'deny') && row.klass !== 'blocked') refusal = `gated (${row.agent} is ${row.klass}, not blocked)`;
      return { action: a, label: a[0]!.toUpperCase() + a.slice(1), refusal };
    });
    return Promise.resolve(items);
  }

  close(): void {
    this.closed = true;
  }
}
