// What a hook payload says the agent is about to do: the tool, its call (the input as JSON) and a
// one-line summary, for `@agent_pending_tool/_call/_summary`. Pure. A pre-tool event or a blocked
// event describes the pending call; the end of a tool call or of a turn clears it.

import { topLevel } from './hook-event.js';
import { cleanCall, cleanTool, oneLineSummary } from './pending-text.js';
import type { State } from './types.js';

export type PendingUpdate = { kind: 'set'; tool: string; call: string | null; summary: string | null } | { kind: 'clear' } | { kind: 'none' };

const asObject = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

// The spellings agents use: Claude/Gemini/Codex `tool_name`/`tool_input`, Cursor's shell and MCP
// hooks (`command`, `tool_name`), OpenCode's permission events (`type`/`title`/`pattern`, nested
// under `properties` or `permission`).
const TOOL_KEYS = ['tool_name', 'toolName', 'tool'];
const INPUT_KEYS = ['tool_input', 'toolInput', 'input', 'args', 'arguments'];
const SUMMARY_KEYS = ['command', 'cmd', 'file_path', 'filePath', 'path', 'url', 'pattern', 'query', 'title', 'description'];

function first(o: Record<string, unknown>, keys: readonly string[]): unknown {
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) return o[k];
  return undefined;
}

function summaryFrom(tool: string, input: Record<string, unknown> | null, top: Record<string, unknown>): string | null {
  for (const src of [input, top]) {
    if (src === null) continue;
    const v = first(src, SUMMARY_KEYS);
    if (typeof v === 'string' && v.trim() !== '') return oneLineSummary(`${tool}: ${v}`);
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return oneLineSummary(`${tool}: ${v.join(' ')}`);
  }
  return oneLineSummary(tool);
}

/** The pending call a payload describes, or null when it names no tool. */
export function pendingFromPayload(payload: string): { tool: string; call: string | null; summary: string | null } | null {
  const raw = topLevel(payload);
  if (raw === null) return null;
  const top = asObject(raw['properties']) ?? asObject(raw['permission']) ?? raw;
  let tool = cleanTool(first(top, TOOL_KEYS));
  // OpenCode names the permission's kind in `type`; a bare shell hook only has its command.
  if (tool === null && top !== raw) tool = cleanTool(top['type']);
  if (tool === null && typeof top['command'] === 'string') tool = 'shell';
  if (tool === null) return null;
  const inputRaw = first(top, INPUT_KEYS);
  const input = asObject(inputRaw);
  const callSource = inputRaw !== undefined ? inputRaw : typeof top['command'] === 'string' ? { command: top['command'] } : null;
  const call = callSource === null ? null : cleanCall(typeof callSource === 'string' ? callSource : JSON.stringify(callSource));
  return { tool, call, summary: summaryFrom(tool, input, top) };
}

const PRE_EVENT = /^(pre|before)/i;

/**
 * What a stamped hook event does to the pending call. `state` is the state it stamps (null when
 * it stamps nothing): a blocked or pre-tool event that names a tool sets it; idle, or working
 * from any other event (a tool finished, a new prompt), clears it.
 */
export function pendingUpdate(kind: string, state: State | null, payload: string): PendingUpdate {
  if (state === null) return { kind: 'none' };
  const pre = PRE_EVENT.test(kind);
  if (state === 'blocked' || pre) {
    const p = pendingFromPayload(payload);
    if (p !== null) return { kind: 'set', ...p };
    return state === 'blocked' ? { kind: 'none' } : { kind: 'clear' };
  }
  if (state === 'idle' || state === 'working') return { kind: 'clear' };
  return { kind: 'none' };
}
