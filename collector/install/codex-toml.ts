// Codex's `notify` program in config.toml, edited as text so the user's comments, blank lines
// and key order survive: only the lines of the root `notify` key are ever touched. smol-toml
// validates the file and reads values; it is never used to write.

import { parse } from 'smol-toml';
import { EditError } from './json-hooks.js';

export const notifyLine = (ref: string) => `notify = [${[ref, 'codex', 'notify'].map((s) => JSON.stringify(s)).join(', ')}]`;

const HEADER = /^\s*\[/;
const NOTIFY = /^\s*notify\s*=/;
const KEYVAL = /^\s*[A-Za-z0-9_"'.-]+\s*=/;

function parsed(text: string): Record<string, unknown> {
  try {
    return parse(text);
  } catch (e) {
    throw new EditError(`cannot parse Codex config.toml: ${(e as Error).message.split('\n')[0]}`);
  }
}

/** Root-level lines: everything before the first table header. */
function rootEnd(lines: string[]): number {
  const at = lines.findIndex((l) => HEADER.test(l));
  return at < 0 ? lines.length : at;
}

/** Line span [start, end) of the root `notify` key, its value possibly spanning lines. */
function notifySpan(lines: string[]): [number, number] | null {
  const end = rootEnd(lines);
  const start = lines.slice(0, end).findIndex((l) => NOTIFY.test(l));
  if (start < 0) return null;
  for (let stop = start + 1; stop <= end; stop++) {
    try {
      parse(lines.slice(start, stop).join('\n'));
      return [start, stop];
    } catch {
      // the value continues on the next line
    }
  }
  return [start, start + 1];
}

const isOurs = (v: unknown) => Array.isArray(v) && typeof v[0] === 'string' && v[0].split('/').pop() === 'tma-hook';

export type NotifyState = 'current' | 'stale' | 'foreign' | 'absent';

export function notifyState(text: string, ref: string): NotifyState {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text);
  } catch {
    return 'absent';
  }
  const v = doc.notify;
  if (v === undefined) return 'absent';
  if (JSON.stringify(v) === JSON.stringify([ref, 'codex', 'notify'])) return 'current';
  return isOurs(v) ? 'stale' : 'foreign';
}

export function planNotifyInstall(text: string, ref: string): string {
  const doc = parsed(text);
  const state = notifyState(text, ref);
  if (state === 'current') return text;
  if (state === 'foreign') {
    throw new EditError(
      `config.toml already has a notify program (${JSON.stringify(doc.notify)}); Codex runs only one, so point it at ` +
        '`tma-hook codex notify` yourself or remove it, then re-run',
    );
  }
  const lines = text.split('\n');
  const span = notifySpan(lines);
  if (span) {
    lines.splice(span[0], span[1] - span[0], notifyLine(ref));
    return lines.join('\n');
  }
  // A new root key goes after the last root key, else above the first table (and the comments
  // that introduce it), else at the end.
  const end = rootEnd(lines);
  let lastKey = -1;
  for (let i = 0; i < end; i++) if (KEYVAL.test(lines[i]!)) lastKey = i;
  if (lastKey >= 0) {
    const span2 = valueEnd(lines, lastKey, end);
    lines.splice(span2, 0, notifyLine(ref));
    return lines.join('\n');
  }
  if (end < lines.length) {
    let at = end;
    while (at > 0 && /^\s*#/.test(lines[at - 1]!)) at--;
    lines.splice(at, 0, notifyLine(ref));
    return lines.join('\n');
  }
  if (text === '') return `${notifyLine(ref)}\n`;
  return text.endsWith('\n') ? `${text}${notifyLine(ref)}\n` : `${text}\n${notifyLine(ref)}\n`;
}

/** End (exclusive) of the key-value starting at line `i`, for multi-line arrays and strings. */
function valueEnd(lines: string[], i: number, limit: number): number {
  for (let stop = i + 1; stop <= limit; stop++) {
    try {
      parse(lines.slice(i, stop).join('\n'));
      return stop;
    } catch {
      // keep going
    }
  }
  return i + 1;
}

/** Remove `notify` only when it is ours; a foreign program is left alone. */
export function planNotifyUninstall(text: string): string {
  const doc = parsed(text);
  if (!isOurs(doc.notify)) return text;
  const lines = text.split('\n');
  const span = notifySpan(lines);
  if (!span) return text;
  lines.splice(span[0], span[1] - span[0]);
  return lines.join('\n');
}
