// The status-line context shim (Claude's settings.json, Cursor's cli-config.json): the agent's
// status-line command also hands its JSON to `tma event --kind context`, and whatever command
// the user had keeps drawing the status line. Text in, text out.

import { deleteKey, getKey, jobj, jstr, parseJson, setKey, type JsonValue } from './json-doc.js';
import { keepLayout, parseRoot } from './json-hooks.js';

const JOIN = ` & printf '%s' "$_TMA_SL" | `;
export const shimMarker = (agent: string) => `event --agent ${agent} --kind context`;

export function renderShim(bin: string, agent: string, inner: string | null): string {
  const own =
    `_TMA_SL=$(cat); _TMA_BIN='${bin}'; [ -x "$_TMA_BIN" ] || _TMA_BIN=tma; printf '%s' "$_TMA_SL" | "$_TMA_BIN" ` +
    `${shimMarker(agent)} --pane "\${TMUX_PANE:-}" --payload - >/dev/null 2>&1`;
  return inner ? `${own}${JOIN}${inner}` : own;
}

const innerOf = (cmd: string): string | null => {
  const at = cmd.indexOf(JOIN);
  return at < 0 ? null : cmd.slice(at + JOIN.length) || null;
};

function commandOf(r: JsonValue): string | null {
  const sl = getKey(r, 'statusLine');
  const c = sl ? getKey(sl, 'command') : undefined;
  return c?.t === 'str' ? c.v : null;
}

/** Wrap the current status-line command (or none) in our shim; re-wrapping keeps the inner one. */
export function planShimInstall(text: string, agent: string, bin: string): string {
  const r = parseRoot(text);
  const cur = commandOf(r);
  const inner = cur === null ? null : cur.includes(shimMarker(agent)) ? innerOf(cur) : cur;
  const sl = getKey(r, 'statusLine');
  const obj = (sl?.t === 'obj' ? sl : jobj([])) as Extract<JsonValue, { t: 'obj' }>;
  setKey(obj, 'type', jstr('command'));
  setKey(obj, 'command', jstr(renderShim(bin, agent, inner)));
  setKey(r, 'statusLine', obj);
  return keepLayout(text, r);
}

/** Unwrap ours: the user's own command comes back, or statusLine goes if there was none. */
export function planShimRemove(text: string, agent: string): string {
  const r = parseRoot(text);
  const cur = commandOf(r);
  if (cur === null || !cur.includes(shimMarker(agent))) return text;
  const inner = innerOf(cur);
  if (inner === null) deleteKey(r, 'statusLine');
  else setKey(getKey(r, 'statusLine') as Extract<JsonValue, { t: 'obj' }>, 'command', jstr(inner));
  return keepLayout(text, r);
}

export type ShimState = 'not_installed' | 'foreign' | 'wired' | 'stale';

export function shimState(text: string, agent: string, bin: string): ShimState {
  let r: JsonValue;
  try {
    r = parseJson(text, 'last');
  } catch {
    return 'not_installed';
  }
  const cur = commandOf(r);
  if (cur === null) return 'not_installed';
  if (!cur.includes(shimMarker(agent))) return 'foreign';
  return cur === renderShim(bin, agent, innerOf(cur)) ? 'wired' : 'stale';
}
