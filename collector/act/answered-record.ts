// The broker's own record of the prompts it answered, kept beside the pane's `@tma_answered`
// option: any process on the server can erase or rewrite that option, and then a prompt could be
// answered twice. The record lives in memory for the process's lifetime and on disk next to the
// slot receipts (one small file per server and pane, replaced by rename), so a restarted collector
// and the one-shot CLI read the same record. It counts only for the blocked episode (`since`) it
// was made in: the same dialog shown again later is a new question.

import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface AnswerRecord {
  promptId: string | null;
  at: number;
  /** The blocked episode the answer was given in. */
  since: number;
}

const memory = new Map<string, AnswerRecord>();

const fileOf = (dir: string, socket: string, pane: string) =>
  join(dir, 'answered', `${createHash('sha256').update(socket).update('\u0000').update(pane).digest('hex').slice(0, 32)}.json`);

function valid(v: unknown): v is AnswerRecord {
  const r = v as AnswerRecord;
  return (
    typeof r === 'object' &&
    r !== null &&
    (r.promptId === null || typeof r.promptId === 'string') &&
    Number.isSafeInteger(r.at) &&
    Number.isSafeInteger(r.since)
  );
}

export function ownAnswer(dir: string, socket: string, pane: string): AnswerRecord | null {
  const path = fileOf(dir, socket, pane);
  const held = memory.get(path);
  if (held) return held;
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return valid(doc) ? doc : null;
  } catch {
    return null;
  }
}

/** Remember an answer; the disk copy is best effort (the memory one holds for this process). */
export function recordAnswer(dir: string, socket: string, pane: string, r: AnswerRecord, onNote?: (m: string) => void): void {
  const path = fileOf(dir, socket, pane);
  memory.set(path, r);
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, `${JSON.stringify(r)}\n`, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    onNote?.(`could not keep the answered record on disk: ${(e as Error).message}`);
  }
}

/** Whether the record says the prompt showing in this episode was answered. */
export function recordCovers(r: AnswerRecord | null, state: string | null, since: number | null, promptId: string | null): boolean {
  if (r === null || state !== 'blocked' || since !== r.since) return false;
  return r.promptId === null || r.promptId === promptId;
}
