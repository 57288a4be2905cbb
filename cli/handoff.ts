// What bin/tma.js learned before the command line loaded: a quick `tma status` that declined
// (cli/status-fast.ts) has read the server already, and the full path's first cycle reuses that
// read instead of spawning tmux again. The two live in separate bundles, so the read is passed
// through `run()` and kept here until the status verb takes it.

export interface Handoff {
  /** Outputs of listingChain(true) (collector/engine/settled-read.ts), read for this command. */
  statusListing?: readonly string[];
}

let kept: Handoff = {};

export function handOver(h: Handoff): void {
  kept = h;
}

/** The status read, once; later callers read tmux themselves. */
export function takeStatusListing(): readonly string[] | undefined {
  const l = kept.statusListing;
  kept = {};
  return l;
}
