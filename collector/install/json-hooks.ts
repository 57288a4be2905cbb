// Hook entries in an agent's JSON config, planned as text in → text out. Two shapes: nested
// (Claude, Gemini, Codex hooks.json: `hooks.<Event>[] = {hooks: [{type, command}]}`) and flat
// (Cursor: `hooks.<event>[] = {command}` with a root `version`). Only entries whose command is
// `<…/tma-hook> <agent> <event>` are ours; everything else is the user's and stays put.

import { canonicalJson, deleteKey, getKey, jarr, jobj, jstr, parseJson, serializeJson, setKey, type JsonValue } from './json-doc.js';

export type HookShape = 'nested' | 'flat';

export interface HookTarget {
  agent: string;
  events: string[];
  /** The wrapper reference written into commands (an absolute path, or the bare `tma-hook`). */
  ref: string;
  shape: HookShape;
}

export class EditError extends Error {}

export const hookCommand = (ref: string, agent: string, event: string) => `${ref} ${agent} ${event}`;

/** Ours for (agent, event): the command names a file called tma-hook, in any directory. */
export function isOurCommand(cmd: string, agent: string, event: string): boolean {
  const tail = ` ${agent} ${event}`;
  if (!cmd.endsWith(tail)) return false;
  const prefix = cmd.slice(0, -tail.length);
  return prefix.split('/').pop() === 'tma-hook';
}

function commandsOf(el: JsonValue, shape: HookShape): string[] {
  if (shape === 'flat') {
    const c = getKey(el, 'command');
    return c?.t === 'str' ? [c.v] : [];
  }
  const inner = getKey(el, 'hooks');
  if (inner?.t !== 'arr') return [];
  return inner.items.flatMap((h) => {
    const c = getKey(h, 'command');
    return c?.t === 'str' ? [c.v] : [];
  });
}

function element(shape: HookShape, cmd: string): JsonValue {
  return shape === 'flat'
    ? jobj([['command', jstr(cmd)]])
    : jobj([
        [
          'hooks',
          jarr([
            jobj([
              ['type', jstr('command')],
              ['command', jstr(cmd)],
            ]),
          ]),
        ],
      ]);
}

export function parseRoot(text: string): Extract<JsonValue, { t: 'obj' }> {
  let root: JsonValue;
  try {
    root = parseJson(text);
  } catch (e) {
    throw new EditError((e as Error).message);
  }
  if (root.t !== 'obj') throw new EditError('the top level is not a JSON object');
  return root;
}

function hooksObject(root: Extract<JsonValue, { t: 'obj' }>, create: boolean): Extract<JsonValue, { t: 'obj' }> | null {
  const h = getKey(root, 'hooks');
  if (h === undefined) {
    if (!create) return null;
    const fresh = jobj([]) as Extract<JsonValue, { t: 'obj' }>;
    setKey(root, 'hooks', fresh);
    return fresh;
  }
  if (h.t !== 'obj') throw new EditError('"hooks" is not an object');
  return h;
}

/** Add (or repoint) our entry for every event; a second run returns the same text. */
export function planInstall(text: string, t: HookTarget): string {
  const root = parseRoot(text);
  const hadVersion = getKey(root, 'version') !== undefined;
  const hadHooks = getKey(root, 'hooks') !== undefined;
  const hooks = hooksObject(root, true)!;
  for (const event of t.events) {
    const cmd = hookCommand(t.ref, t.agent, event);
    let list = getKey(hooks, event);
    if (list === undefined) {
      list = jarr([]);
      setKey(hooks, event, list);
    }
    if (list.t !== 'arr') throw new EditError(`"hooks.${event}" is not an array`);
    const cmds = (el: JsonValue) => commandsOf(el, t.shape);
    list.items = list.items.filter((el) => {
      const c = cmds(el);
      return !(c.some((x) => isOurCommand(x, t.agent, event)) && !c.includes(cmd));
    });
    if (!list.items.some((el) => cmds(el).includes(cmd))) list.items.push(element(t.shape, cmd));
  }
  if (t.shape === 'flat' && !hadVersion) {
    // Cursor wants a schema version; a new one goes before a new `hooks`.
    const v: [string, JsonValue] = ['version', { t: 'num', raw: '1' }];
    if (!hadHooks) root.entries.splice(root.entries.length - 1, 0, v);
    else root.entries.push(v);
  }
  return keepLayout(text, root);
}

/** Remove every entry of ours for these events (whatever wrapper path it names), pruning empties. */
export function planUninstall(text: string, t: Omit<HookTarget, 'ref'>): string {
  const root = parseRoot(text);
  const hooks = hooksObject(root, false);
  if (!hooks) return text;
  for (const event of t.events) {
    const list = getKey(hooks, event);
    if (list?.t !== 'arr') continue;
    const before = list.items.length;
    list.items = list.items.filter((el) => !commandsOf(el, t.shape).some((x) => isOurCommand(x, t.agent, event)));
    if (list.items.length === 0 && before > 0) deleteKey(hooks, event);
  }
  if (hooks.entries.length === 0) {
    deleteKey(root, 'hooks');
    const v = getKey(root, 'version');
    if (t.shape === 'flat' && v?.t === 'num' && v.raw === '1') deleteKey(root, 'version');
  }
  return keepLayout(text, root);
}

/**
 * The edited document as text: the file's own bytes when the edit changed nothing, else the file
 * with only the edited parts written anew (json-doc.ts keeps the layout of the rest).
 */
export function keepLayout(text: string, root: JsonValue): string {
  try {
    if (canonicalJson(parseJson(text)) === canonicalJson(root)) return text;
  } catch {
    // An unreadable original: nothing of it to keep.
  }
  return serializeJson(root);
}

export type EventState = 'current' | 'stale' | 'absent';

/** Each event's state in the file, read as the agent reads it; unparseable JSON reads as empty. */
export function eventStates(text: string, t: HookTarget): Map<string, EventState> {
  let root: JsonValue;
  try {
    root = parseJson(text, 'last');
  } catch {
    root = jobj([]);
  }
  const hooks = getKey(root, 'hooks');
  const out = new Map<string, EventState>();
  for (const event of t.events) {
    const list = hooks ? getKey(hooks, event) : undefined;
    const cmds = list?.t === 'arr' ? list.items.flatMap((el) => commandsOf(el, t.shape)) : [];
    const cmd = hookCommand(t.ref, t.agent, event);
    out.set(event, cmds.includes(cmd) ? 'current' : cmds.some((c) => isOurCommand(c, t.agent, event)) ? 'stale' : 'absent');
  }
  return out;
}
