// Quiet-pane reuse: a pane whose window printed nothing since we last stamped it does not need a
// new capture. Every condition below names a way the stored verdict could be stale anyway.

import type { FoldConfig, StampedState } from './types.js';

export function canReuseStamp(prev: StampedState, windowActivitySecs: number, foregroundIsAgent: boolean, cfg: FoldConfig, now: number): boolean {
  if (cfg.freshnessMs === 0) return false;
  // Hook-only panes were never captured; their stamp says nothing about the screen.
  if (prev.hash === null) return false;
  if (prev.stampedAt > now) return false;
  // A working verdict may be waiting out its dwell; it must be looked at again.
  if (prev.state === 'working') return false;
  // The foreground fact can flip without any output: re-derive when it disagrees with the source.
  if (prev.source === 'process' && foregroundIsAgent) return false;
  if ((prev.source === 'capture' || prev.source === 'activity') && !foregroundIsAgent) return false;
  if (prev.source === 'hook') {
    const decay = prev.state === 'blocked' ? cfg.blockedDecayMs : cfg.hookDecayMs;
    if (now - prev.evidenceAt > decay) return false;
  }
  // The whole activity second must lie strictly before the stamp.
  return windowActivitySecs !== 0 && (windowActivitySecs + 1) * 1000 <= prev.stampedAt;
}
