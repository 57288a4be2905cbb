// The dialog a blocked pane shows now, as the prompt identity and summary read it. Pure.
//
// The capture reaches 50 rows into history and a rule's `tail_lines(N)` region counts rows, so
// both take in text that is not the dialog (an old dialog scrolled off, output above) and change
// when the pane is resized and the agent lays the same dialog out at another width. Here only the
// rows on screen are read, the dialog starts at the LAST place the manifest's summary pattern
// matches there, and its text is folded so a re-layout does not change it.

import { stripAnsi } from './ansi.js';
import { blockedRuleSaw } from './prompt-id.js';
import { regionText, rustLines } from './regions.js';
import type { AgentManifest, Snapshot } from './types.js';

/** The snapshot cut to the rows the pane shows; history above them is dropped. */
export function screenOnly(snap: Snapshot): Snapshot {
  const h = snap.visibleHeight;
  // An unknown pane height: the whole capture, as the `visible` region reads it.
  if (h === null || h <= 0) return snap;
  const lines = rustLines(snap.tail);
  return lines.length <= h ? snap : { ...snap, tail: lines.slice(lines.length - h).join('\n') };
}

/**
 * The text a dialog is identified by: no escapes, no box-drawing or block glyphs (borders are
 * drawn to the pane's width), every run of whitespace, line breaks included, one space (a
 * re-layout moves breaks between words). Whitespace is folded, never removed: "rm -rf / tmp"
 * and "rm -rf /tmp" must stay two prompts.
 */
export function normaliseDialog(text: string): string {
  return stripAnsi(text)
    .replace(/[\u2500-\u259f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The match of `re` that starts last in `text` (overlaps allowed), else null. */
export function lastMatch(re: RegExp, text: string): RegExpExecArray | null {
  const g = new RegExp(re.source, re.flags.replace(/[gy]/g, '') + 'g');
  let last: RegExpExecArray | null = null;
  for (let m = g.exec(text); m !== null; m = g.exec(text)) {
    last = m;
    g.lastIndex = m.index + 1;
  }
  return last;
}

export interface ScreenDialog {
  /** What identifies the dialog (normalised), or null when no blocked rule sees one. */
  text: string | null;
  /** The summary read from that same dialog, raw; null when it has none readable. */
  summary: string | null;
}

function summaryOf(m: RegExpExecArray): string | null {
  const groups = m.slice(1).filter((g): g is string => g !== undefined && g.trim() !== '');
  return m.length > 1 ? (groups.length ? groups.map((g) => g.trim()).join(': ') : null) : m[0];
}

/**
 * The last dialog on screen. With a `[prompt]` section whose pattern matches the screen, the
 * dialog runs from that match to the bottom and the summary is that match's; otherwise it is what
 * the winning blocked rule sees on screen (or, matching only with history, in the capture), and
 * there is no summary.
 */
export function screenDialog(manifest: AgentManifest, snap: Snapshot): ScreenDialog {
  const screen = screenOnly(snap);
  const p = manifest.prompt;
  if (p) {
    const text = regionText(p.region, screen);
    const m = lastMatch(p.summary, text);
    if (m !== null) return { text: normaliseDialog(text.slice(m.index)), summary: summaryOf(m) };
  }
  const seen = blockedRuleSaw(manifest, screen) ?? blockedRuleSaw(manifest, snap);
  return { text: seen === null ? null : normaliseDialog(seen), summary: null };
}

/** The one-line summary the dialog on screen shows, read as the manifest's `[prompt]` says; raw. */
export function screenSummaryRaw(manifest: AgentManifest, snap: Snapshot): string | null {
  return screenDialog(manifest, snap).summary;
}
