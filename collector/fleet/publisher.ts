// The collector's half of a link: hello, then a snapshot or a replay, then deltas and server
// events as the engines report, heartbeats, and answers to act requests.
//
// Every change gets its sequence number when it happens, whether or not a hub is listening, and
// goes into a ring; a hub that comes back on the same epoch is replayed what it missed, or sent
// a fresh snapshot when the ring no longer reaches back far enough.

import {
  DEAD_AFTER_HEARTBEATS,
  HEARTBEAT_MS,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  decodeFrame,
  encodeFrame,
  type ActResult,
  type MuteResult,
  type PreviewResult,
  type ActionLane,
  type CollectorFrame,
  type HubFrame,
  type ServerState,
} from '../../shared/protocol.js';
import type { FrameLink } from '../../shared/link.js';
import { protocolRowObject, type ProtocolRow } from '../../shared/row.js';
import { diffRows, splitDelta, splitSnapshot, viewOf, type RowView } from './frame-split.js';
import { FrameRing } from './ring.js';
import type { LineLog } from '../../shared/log-level.js';

export type ActRequest = Extract<HubFrame, { type: 'act' }>;
export type MuteRequest = Extract<HubFrame, { type: 'mute' }>;
export type PreviewRequest = Extract<HubFrame, { type: 'preview' }>;

export interface PublisherOptions {
  host: string;
  version: string;
  /** Random hex, new per process start: sequence numbers only mean something within one. */
  epoch: string;
  allowedActions: readonly string[];
  /** Which allowed actions reach which agent, announced so a hub offers only those. */
  actionsByAgent?: Record<string, Record<string, ActionLane>>;
  onAct?: (req: ActRequest) => Promise<ActResult>;
  /** A hub's mute and preview (dry-run) requests; a host without them announces neither. */
  onMute?: (req: MuteRequest) => Promise<MuteResult>;
  onPreview?: (req: PreviewRequest) => Promise<PreviewResult>;
  /** Whether a hub may mute panes here (`[remote] allow_mute`, default yes): the hello says so. */
  allowMute?: boolean;
  now?: () => number;
  heartbeatMs?: number;
  ringFrames?: number;
  ringBytes?: number;
  maxFrameBytes?: number;
  log?: LineLog;
  /** `[remote] share_prompt` (default yes): pending call and summary travel too. */
  sharePrompt?: boolean;
  /** A link was brought up to date (notifications waiting for a hub go out now). */
  onLive?: () => void;
  /** The hub recorded these notifications. */
  onNotifyAck?: (ids: string[]) => void;
}

interface ServerEntry {
  incarnation: string;
  rows: RowView;
}

interface Session {
  link: FrameLink;
  /** Welcomed and brought up to date: live frames go out as they happen. */
  live: boolean;
  /** A welcome arrived before the engines' first round; answered once ready. */
  pendingResume: number | null | undefined;
  timer: ReturnType<typeof setInterval>;
  /** Fires when the hub has been silent for DEAD_AFTER_HEARTBEATS intervals; re-armed on every frame. */
  silence: ReturnType<typeof setTimeout> | null;
  /** The hub welcomed this link: its end is worth a line (a link refused at hello was never up). */
  up: boolean;
}

type Sequenced =
  | { type: 'delta'; server: string; incarnation: string; upserts: ProtocolRow[]; removals: string[] }
  | {
      type: 'server';
      event: 'appeared' | 'incarnation' | 'gone';
      server: string;
      incarnation: string;
    };

/**
 * The protocol form drops the title; what else only this host should see is cleared here, before
 * anything is framed: agent-printed text (pending call and summary), transcript paths, and the
 * agent's session id, which can resume its conversation (spec: treat it as a secret).
 */
export function hostOnlyCleared(row: ProtocolRow, sharePrompt = true): ProtocolRow {
  const base = { ...protocolRowObject(row), session: null, transcript: null };
  return sharePrompt ? base : { ...base, pending_call: null, pending_summary: null };
}

export class Publisher {
  private seqNo = 0;
  private readonly servers = new Map<string, ServerEntry>();
  private readonly ring: FrameRing;
  private session: Session | null = null;
  private ready = false;
  private readonly now: () => number;
  private readonly heartbeatMs: number;
  private readonly maxFrameBytes: number;
  private readonly log: LineLog;

  constructor(private readonly opts: PublisherOptions) {
    this.ring = new FrameRing(opts.ringFrames, opts.ringBytes);
    this.now = opts.now ?? Date.now;
    this.heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    this.maxFrameBytes = opts.maxFrameBytes ?? MAX_FRAME_BYTES;
    this.log = opts.log ?? (() => undefined);
  }

  /** The last sequence number of this epoch. */
  get seq(): number {
    return this.seqNo;
  }

  get epoch(): string {
    return this.opts.epoch;
  }

  /** Take over a new link (a reconnect replaces the old one) and say hello on it. */
  attach(link: FrameLink): void {
    this.detach('replaced by a new link');
    const s: Session = {
      link,
      live: false,
      pendingResume: undefined,
      timer: setInterval(() => this.tick(s), this.heartbeatMs),
      silence: null,
      up: false,
    };
    this.session = s;
    this.armSilence(s);
    link.onMessage((text) => this.receive(s, text));
    link.onClose((reason) => {
      if (s.up) this.log(`hub link down: ${reason}`, 'warn');
      s.up = false;
      clearInterval(s.timer);
      if (s.silence) clearTimeout(s.silence);
      if (this.session === s) this.session = null;
    });
    this.send(s, {
      type: 'hello',
      protocol: PROTOCOL_VERSION,
      host: this.opts.host,
      collector_version: this.opts.version,
      epoch: this.opts.epoch,
      actions_allowed: [...this.opts.allowedActions],
      at: this.now(),
      ...(this.opts.actionsByAgent ? { actions_by_agent: this.opts.actionsByAgent } : {}),
      // So a hub can say "not shared by this host" rather than a bare "permission".
      share_prompt: this.opts.sharePrompt ?? true,
      // Only when there are some, so a collector that answers none says what older ones said.
      ...(this.remoteVerbs().length ? { remote_verbs: this.remoteVerbs() } : {}),
    });
  }

  private remoteVerbs(): string[] {
    const v: string[] = [];
    if (this.opts.onMute && this.opts.allowMute !== false) v.push('mute');
    if (this.opts.onPreview) v.push('preview');
    return v;
  }

  /** The engines finished their first round: a snapshot now tells the truth. */
  markReady(): void {
    if (this.ready) return;
    this.ready = true;
    const s = this.session;
    if (s && s.pendingResume !== undefined) this.sync(s, s.pendingResume);
  }

  /** A server's rows after a cycle. Only what changed is sent. */
  update(server: string, incarnation: string, rows: readonly ProtocolRow[]): void {
    const clean = rows.map((r) => hostOnlyCleared(r, this.opts.sharePrompt ?? true));
    const prev = this.servers.get(server);
    if (!prev || prev.incarnation !== incarnation) {
      this.servers.set(server, { incarnation, rows: viewOf(clean) });
      if (!this.ready) return;
      this.emit({ type: 'server', event: prev ? 'incarnation' : 'appeared', server, incarnation });
      this.emitDelta({ type: 'delta', server, incarnation, upserts: clean, removals: [] });
      return;
    }
    const d = diffRows(prev.rows, clean);
    prev.rows = d.next;
    if (this.ready) this.emitDelta({ type: 'delta', server, incarnation, upserts: d.upserts, removals: d.removals });
  }

  /** A server went away: its rows go with it. */
  gone(server: string): void {
    const prev = this.servers.get(server);
    if (!prev) return;
    this.servers.delete(server);
    if (this.ready) this.emit({ type: 'server', event: 'gone', server, incarnation: prev.incarnation });
  }

  /** Everything published right now, as a snapshot carries it. */
  state(): ServerState[] {
    return [...this.servers].map(([server, e]) => ({ server, incarnation: e.incarnation, rows: [...e.rows.values()].map((v) => v.row) }));
  }

  close(reason = 'collector stopping'): void {
    this.detach(reason);
  }

  private detach(reason: string): void {
    const s = this.session;
    if (!s) return;
    this.session = null;
    clearInterval(s.timer);
    if (s.silence) clearTimeout(s.silence);
    s.link.close(reason);
  }

  private receive(s: Session, text: string): void {
    if (this.session !== s) return;
    this.armSilence(s);
    const r = decodeFrame<HubFrame>(text, 'from-hub');
    if (!r.ok) {
      this.log(`hub sent a bad frame (${r.error.code}): ${r.error.message}`, 'warn');
      this.send(s, r.error);
      return;
    }
    const f = r.frame;
    switch (f.type) {
      case 'welcome':
        if (f.protocol !== PROTOCOL_VERSION) {
          this.log(`hub speaks protocol ${f.protocol}, this collector ${PROTOCOL_VERSION}; closing`, 'error');
          this.detach('protocol mismatch');
          return;
        }
        // An ssh hub names this host by its config entry; the hub rebinds the rows, we just say so.
        if (!s.up) this.log('hub link up');
        s.up = true;
        if (f.host !== undefined && f.host !== this.opts.host) this.log(`the hub publishes this host as ${f.host} (hello said ${this.opts.host})`);
        if (this.ready) this.sync(s, f.resume_from);
        else s.pendingResume = f.resume_from;
        return;
      case 'heartbeat':
        return;
      case 'error':
        this.log(`hub error ${f.code}: ${f.message}`, 'warn');
        return;
      case 'act':
        void this.answer(s, f);
        return;
      case 'mute':
        void this.answerMute(s, f);
        return;
      case 'preview':
        void this.answerPreview(s, f);
        return;
      case 'notify_ack':
        this.opts.onNotifyAck?.(f.ids);
        return;
    }
  }

  /** Bring a welcomed hub up to date: replay what it missed if held, else a fresh snapshot. */
  private sync(s: Session, resumeFrom: number | null): void {
    s.pendingResume = undefined;
    const replay = resumeFrom === null ? null : this.ring.since(resumeFrom, this.seqNo);
    if (replay) {
      for (const text of replay) s.link.send(text);
    } else {
      const parts = splitSnapshot(this.state(), this.opts.epoch, this.maxFrameBytes);
      parts.forEach((servers, i) => this.send(s, { type: 'snapshot', epoch: this.opts.epoch, seq: this.seqNo, servers, complete: i === parts.length - 1 }));
    }
    s.live = true;
    this.opts.onLive?.();
  }

  /** Send an unsequenced frame (a notification) if a link is live; false when none is. */
  sendLive(frame: CollectorFrame): boolean {
    const s = this.session;
    if (!s?.live) return false;
    this.send(s, frame);
    return true;
  }

  private async answer(s: Session, req: ActRequest): Promise<void> {
    let result: ActResult;
    const base = { schema: 1 as const, action: req.action, pane: req.pane, host: this.opts.host, server: req.server };
    if (!this.opts.onAct) {
      result = { ...base, outcome: 'error', exit_code: 1, reason: 'not-supported' };
    } else {
      try {
        result = await this.opts.onAct(req);
      } catch (e) {
        this.log(`act ${req.action} on ${req.pane} failed: ${(e as Error).message}`, 'error');
        result = { ...base, outcome: 'error', exit_code: 1, reason: 'internal' };
      }
    }
    // The hub matches results by id; a result for a link that has since closed is dropped there.
    if (this.session === s) this.send(s, { type: 'act_result', id: req.id, result });
  }

  private async answerMute(s: Session, req: MuteRequest): Promise<void> {
    const base = { schema: 1 as const, pane: req.pane, until_ms: null, host: this.opts.host, server: req.server };
    let result: MuteResult;
    try {
      result = this.opts.onMute ? await this.opts.onMute(req) : { ...base, outcome: 'error', exit_code: 1, reason: 'not-supported' };
    } catch (e) {
      this.log(`mute on ${req.pane} failed: ${(e as Error).message}`, 'error');
      result = { ...base, outcome: 'error', exit_code: 1, reason: 'internal' };
    }
    if (this.session === s) this.send(s, { type: 'mute_result', id: req.id, result });
  }

  private async answerPreview(s: Session, req: PreviewRequest): Promise<void> {
    const base = { schema: 1 as const, host: this.opts.host, server: req.server, pane: req.pane, found: false, agent: null, state: null, prompt_id: null };
    const refusedAll = (reason: string): PreviewResult => ({
      ...base,
      pending_summary: null,
      actions: req.actions.map((name) => ({ name, fireable: false, reason, lane: null, keys: null })),
    });
    let result: PreviewResult;
    try {
      result = this.opts.onPreview ? await this.opts.onPreview(req) : refusedAll('not-supported');
    } catch (e) {
      this.log(`preview on ${req.pane} failed: ${(e as Error).message}`, 'error');
      result = refusedAll('internal');
    }
    if (this.session === s) this.send(s, { type: 'preview_result', id: req.id, result });
  }

  private armSilence(s: Session): void {
    if (s.silence) clearTimeout(s.silence);
    s.silence = setTimeout(() => {
      if (this.session !== s) return;
      this.log(`hub silent for ${DEAD_AFTER_HEARTBEATS} heartbeat intervals; dropping the link`, 'warn');
      this.detach('hub silent');
    }, DEAD_AFTER_HEARTBEATS * this.heartbeatMs);
  }

  private tick(s: Session): void {
    if (this.session !== s) return;
    this.send(s, { type: 'heartbeat', at: this.now(), seq: this.seqNo });
  }

  private emitDelta(d: Extract<Sequenced, { type: 'delta' }>): void {
    for (const part of splitDelta(d, this.opts.epoch, this.maxFrameBytes)) this.emit({ type: 'delta', ...part });
  }

  private emit(body: Sequenced): void {
    this.seqNo += 1;
    const frame = { ...body, epoch: this.opts.epoch, seq: this.seqNo } as CollectorFrame;
    const text = encodeFrame(frame);
    this.ring.push(this.seqNo, text);
    const s = this.session;
    if (s?.live) s.link.send(text);
  }

  private send(s: Session, frame: CollectorFrame): void {
    s.link.send(encodeFrame(frame));
  }
}
