// The keys and the answered mark, sent only while this fire still holds the pane's lock. A lock
// that outlived its deadline (a fire stalled on a loaded machine) can be taken over; the old
// holder must then send nothing, so the check and the send run as one tmux command.

import type { TmuxCommand } from '../core/stamp-render.js';

const LOCK_KEY = '@agent_action';
const NONCE = /^[0-9a-f]{32}$/;

/** A tmux command-language word: double-quoted, with the characters tmux treats specially escaped. */
export function tmuxWord(s: string): string {
  return `"${s.replace(/[\\"$~]/g, (c) => `\\${c}`)}"`;
}

/** `if-shell -F` on our nonce in the lock: keys then mark, or nothing at all. */
export function renderGuardedSend(pane: string, nonce: string, keys: readonly string[], markKey: string, mark: string): TmuxCommand {
  if (!NONCE.test(nonce)) throw new Error(`not a lock nonce: ${JSON.stringify(nonce)}`);
  const target = tmuxWord(pane);
  const send = ['send-keys', '-t', target, ...keys.map(tmuxWord)].join(' ');
  const stamp = ['set-option', '-p', '-t', target, markKey, tmuxWord(mark)].join(' ');
  return ['if-shell', '-F', `#{m:*:${nonce}:*,#{${LOCK_KEY}}}`, `${send} ; ${stamp}`];
}
