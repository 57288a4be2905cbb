// Telling a person something needs them while the page is not in front of them: the tab title,
// and (once they opt in) a browser notification and a short tone when a pane becomes blocked.

import { classOf, detailWord, rowKey, tabTitle } from './format.js';
import { keep, recall } from './storage.js';

const PREF_KEY = 'tma-fleet-alerts';

export class Attention {
  constructor() {
    /** @type {Set<string> | null} */
    this.blocked = null;
    this.on = recall(PREF_KEY) === 'on';
    /** @type {AudioContext | null} */
    this.audio = null;
  }

  /** Notifications need a secure context (https or localhost); the tone works everywhere. */
  get canNotify() {
    return typeof Notification === 'function' && window.isSecureContext;
  }

  /** Called from a click, which is what lets the page make a sound and ask for permission. */
  async toggle() {
    this.on = !this.on;
    keep(PREF_KEY, this.on ? 'on' : 'off');
    if (this.on) {
      this.unlockAudio();
      if (this.canNotify && Notification.permission === 'default') await Notification.requestPermission().catch(() => 'denied');
      this.tone();
    }
    return this.on;
  }

  /** Browsers start audio only after a gesture: any click after a reload wakes it up. */
  unlockAudio() {
    if (!this.audio && typeof AudioContext === 'function') this.audio = new AudioContext();
    void this.audio?.resume?.();
  }

  describe() {
    if (!this.on) return 'alerts off';
    if (!this.canNotify) return 'alerts on (sound; notifications need https)';
    return Notification.permission === 'granted' ? 'alerts on' : 'alerts on (sound only)';
  }

  /**
   * Note a new document: the title always, alerts for panes that just became blocked.
   * @param {import('./format.js').ShownRow[]} rows
   * @param {number} needsCount
   * @param {(import('./format.js').PageHost & { host: string })[]} [hosts]
   */
  observe(rows, needsCount, hosts = []) {
    const title = tabTitle(needsCount);
    if (document.title !== title) document.title = title;
    const now = new Map(rows.filter((r) => classOf(r) === 'blocked' && !r.stale).map((r) => [rowKey(r), r]));
    const before = this.blocked;
    const fresh = before === null ? [] : [...now].filter(([k]) => !before.has(k)).map(([, r]) => r);
    this.blocked = new Set(now.keys());
    if (!this.on || fresh.length === 0) return;
    this.tone();
    if (this.canNotify && Notification.permission === 'granted') {
      for (const r of fresh.slice(0, 3)) {
        const what =
          [
            r.pending_summary,
            r.pending_tool,
            detailWord(
              r,
              hosts.find((h) => h.host === r.host),
            ),
          ].find((x) => typeof x === 'string' && x) ?? 'blocked';
        // The tag folds repeats of the same pane into one notification.
        new Notification(`${r.agent} on ${r.host} needs you`, { body: `${r.locator || r.pane}: ${what}`, tag: rowKey(r) });
      }
    }
  }

  tone() {
    const ctx = this.audio;
    if (!ctx || ctx.state !== 'running') return;
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.frequency.value = 880;
    gain.gain.setValueAtTime(0.12, ctx.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + 0.25);
    osc.connect(gain).connect(ctx.destination);
    osc.start();
    osc.stop(ctx.currentTime + 0.25);
  }
}
