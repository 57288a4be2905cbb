// Batched tmux round trips. Many panes' commands go to tmux in one call; when a pane died since
// the listing, its command fails that whole call, and the same commands are then sent pane by
// pane so one vanished pane never costs the others theirs. Only a plain failure is taken as "this
// pane is gone": a gone server or a timeout still ends the caller's work.

import { chain } from '../core/stamp-render.js';
import { TmuxError } from './errors.js';
import type { TmuxRunner } from './runner-types.js';

/** Rethrow anything but a failed command (a pane gone, a bad target). */
export function rethrowUnlessFailed(e: unknown): void {
  if (!(e instanceof TmuxError) || e.kind !== 'failed') throw e;
}

/** Run one command or `;` chain; false when tmux says it failed. */
export async function runUnlessFailed(runner: TmuxRunner, argv: string[]): Promise<boolean> {
  try {
    await runner.run(argv);
    return true;
  } catch (e) {
    rethrowUnlessFailed(e);
    return false;
  }
}

/**
 * The outputs of each group of commands: all groups in one `runChain`, or, when that call fails,
 * each group in its own, with null for a group that failed.
 */
export async function chainEach(runner: TmuxRunner, groups: readonly string[][][]): Promise<(string[] | null)[]> {
  try {
    const out = await runner.runChain(groups.flat());
    let at = 0;
    return groups.map((g) => out.slice(at, (at += g.length)));
  } catch (e) {
    rethrowUnlessFailed(e);
  }
  const each: (string[] | null)[] = [];
  for (const g of groups) {
    try {
      each.push(await runner.runChain(g));
    } catch (e) {
      rethrowUnlessFailed(e);
      each.push(null);
    }
  }
  return each;
}

/** How `runTogetherOrEach` went. */
export interface Landed {
  /** One call carried every group and the closing commands. */
  together: boolean;
  /** Per group: its commands landed (all true when together). */
  groups: boolean[];
}

/**
 * Every group and then `closing` as one chain. When that call fails, each group on its own,
 * and `closing` is left to the caller (it is usually worked out again from what landed).
 * No group, no call: `closing` is left to the caller then too.
 */
export async function runTogetherOrEach(runner: TmuxRunner, groups: readonly string[][][], closing: readonly string[][]): Promise<Landed> {
  if (!groups.length) return { together: false, groups: [] };
  try {
    await runner.run(chain([...groups.flat(), ...closing]));
    return { together: true, groups: groups.map(() => true) };
  } catch (e) {
    rethrowUnlessFailed(e);
  }
  const landed: boolean[] = [];
  for (const g of groups) landed.push(await runUnlessFailed(runner, chain(g)));
  return { together: false, groups: landed };
}
