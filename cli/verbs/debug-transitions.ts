// `tma debug transitions [--json]`: the last state changes a running collector saw on this tmux
// server (kept in its memory, asked for over the server's wake socket). Without a running
// collector there is no history to show, and the verb says so (exit 1).

import type { Transition, TransitionsDocument } from '../../collector/engine/transition-ring.js';
import { type Parsed } from '../args.js';
import type { DEBUG } from '../verb-flags.js';
import { ExitError, guard, targetOf } from '../local.js';

const STATES = new Set(['working', 'idle', 'blocked', 'unknown']);
const SOURCES = new Set(['hook', 'capture', 'process', 'activity']);

/** The collector's answer, re-emitted with exactly the contract's keys; null when it is not one. */
export function readTransitions(text: string): TransitionsDocument | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const d = v as Partial<Record<keyof TransitionsDocument, unknown>> | null;
  if (!d || d.schema !== 1 || !Number.isInteger(d.cap) || !Number.isInteger(d.recorded) || !Array.isArray(d.transitions)) return null;
  const transitions: Transition[] = [];
  for (const raw of d.transitions as unknown[]) {
    const t = raw as Partial<Record<keyof Transition, unknown>> | null;
    if (!t || typeof t.pane !== 'string' || !/^%\d+$/.test(t.pane)) return null;
    if ((t.from !== null && !STATES.has(t.from as string)) || !STATES.has(t.to as string)) return null;
    if (!Number.isInteger(t.at) || !SOURCES.has(t.source as string)) return null;
    transitions.push({
      pane: t.pane,
      from: t.from as Transition['from'],
      to: t.to as Transition['to'],
      at: t.at as number,
      source: t.source as Transition['source'],
    });
  }
  return { schema: 1, cap: d.cap as number, recorded: d.recorded as number, transitions };
}

export function renderTransitions(doc: TransitionsDocument): string {
  const kept = doc.transitions.length;
  const lines = [`${doc.recorded} transition(s) recorded since the collector started; the last ${kept} of at most ${doc.cap} kept`];
  for (const t of doc.transitions) {
    lines.push(`${new Date(t.at).toISOString()}  ${t.pane.padEnd(5)}  ${(t.from ?? '-').padEnd(7)} -> ${t.to.padEnd(7)}  ${t.source}`);
  }
  return lines.join('\n') + '\n';
}

export async function main(p: Parsed<typeof DEBUG>): Promise<number> {
  return guard(async () => {
    const env = process.env;
    const target = targetOf(p, env);
    const wake = await import('../../collector/fleet/wake.js');
    const path = wake.wakeSocketPath(wake.canonicalSocketPath(wake.socketPathOfTarget(target, env)), wake.wakeDir(env));
    const answer = await wake.askHistory(path);
    if (answer.kind === 'none') {
      throw new ExitError('no collector is running for this tmux server; transitions are kept only in a running collector (`tma collector` or `tma hub`)', 1);
    }
    if (answer.kind === 'refused') throw new ExitError('the collector running for this tmux server keeps no transition history (an older build?)', 1);
    const doc = readTransitions(answer.text);
    if (!doc) throw new ExitError("the collector's transition history could not be read", 1);
    process.stdout.write(p.opts.json === true ? `${JSON.stringify(doc)}\n` : renderTransitions(doc));
    return 0;
  });
}
