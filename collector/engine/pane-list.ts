// The one read every cycle starts with: `list-panes -a` with a fixed field list, joined by U+001F.
// The title goes last and is split with a field limit, so it may contain anything.

export const SEP = '\u001f';

const PANE_FIELDS = [
  '#{pane_id}',
  '#{pane_pid}',
  '#{session_name}',
  '#{window_index}',
  '#{pane_index}',
  '#{pane_current_command}',
  '#{window_activity}',
  '#{alternate_on}',
  '#{scroll_position}',
  '#{pane_height}',
  '#{pane_current_path}',
] as const;

/** Pane options read on every cycle, in the order the format lists them. */
export const OPTION_KEYS = [
  '@agent_name',
  '@agent_state',
  '@agent_detail',
  '@agent_source',
  '@agent_evidence_at',
  '@agent_since',
  '@agent_stamped_at',
  '@agent_attention',
  '@agent_notified_at',
  '@agent_turn_at',
  '@agent_hash',
  '@agent_pid',
  '@agent_session',
  '@agent_subagents',
  '@tma_title_match_pid',
  '@tma_reg_dead_since',
  '@agent_ignore',
  '@agent_mute_until',
  '@agent_context_pct',
  '@agent_context_at',
  '@agent_tokens',
  '@agent_tokens_at',
  '@agent_context_notified_at',
  '@agent_model',
  '@agent_permission_request',
  '@agent_api_endpoint',
  '@agent_pending_tool',
  '@agent_pending_call',
  '@agent_pending_summary',
  '@tma_prompt_id',
  '@tma_answered',
  '@agent_quota_pct',
  '@agent_quota_window',
  '@agent_quota_resets_at',
  '@agent_quota_at',
  '@agent_cost_usd',
  '@agent_hook_at',
  '@tma_hook_request',
] as const;

export type OptionKey = (typeof OPTION_KEYS)[number];

export const LIST_PANES_FORMAT = [...PANE_FIELDS, ...OPTION_KEYS.map((k) => `#{${k}}`), '#{@agent_summary}', '#{@agent_session_summary}', '#{pane_title}'].join(
  SEP,
);

export const FIELD_COUNT = PANE_FIELDS.length + OPTION_KEYS.length + 3;

export interface PaneRecord {
  paneId: string;
  panePid: number;
  sessionName: string;
  windowIndex: number;
  paneIndex: number;
  currentCommand: string;
  /** Epoch seconds of the window's last output; 0 when tmux has none. */
  windowActivity: number;
  alternateOn: boolean;
  scrollPosition: number | null;
  height: number;
  currentPath: string;
  /** Empty options are absent. */
  options: Partial<Record<OptionKey, string>>;
  windowSummary: string;
  sessionSummary: string;
  title: string;
}

export class PaneListError extends Error {}

const int = (s: string, d = 0) => (/^-?\d+$/.test(s) ? Number(s) : d);

export function parsePaneLine(line: string): PaneRecord {
  const parts = line.split(SEP);
  if (parts.length < FIELD_COUNT) {
    throw new PaneListError(`list-panes line has ${parts.length} fields, expected ${FIELD_COUNT}`);
  }
  const title = parts.slice(FIELD_COUNT - 1).join(SEP);
  const f = parts.slice(0, FIELD_COUNT - 1);
  const options: Partial<Record<OptionKey, string>> = {};
  OPTION_KEYS.forEach((k, i) => {
    const v = f[PANE_FIELDS.length + i]!;
    if (v !== '') options[k] = v;
  });
  const base = PANE_FIELDS.length + OPTION_KEYS.length;
  return {
    paneId: f[0]!,
    panePid: int(f[1]!),
    sessionName: f[2]!,
    windowIndex: int(f[3]!),
    paneIndex: int(f[4]!),
    currentCommand: f[5]!,
    windowActivity: int(f[6]!),
    alternateOn: f[7] === '1',
    scrollPosition: f[8] === '' ? null : int(f[8]!),
    height: int(f[9]!),
    currentPath: f[10]!,
    options,
    windowSummary: f[base]!,
    sessionSummary: f[base + 1]!,
    title,
  };
}

export function parsePaneList(stdout: string): PaneRecord[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map(parsePaneLine);
}

export function locatorOf(r: Pick<PaneRecord, 'sessionName' | 'windowIndex' | 'paneIndex'>): string {
  return `${r.sessionName}:${r.windowIndex}.${r.paneIndex}`;
}
