// Types of the page's pure helpers (format.js runs in the browser as written), so the unit tests
// that pin their boundaries are type-checked like the rest of the project.

import type { StateClass } from '../../shared/tokens.js';

/** The row fields the page reads; a fleet row has all of them. */
export interface PageRow {
  host: string;
  server: string;
  pane: string;
  state: string;
  attention: boolean;
  detail: string | null;
  since_ms: number;
  stamped_at_ms: number | null;
  stale?: boolean;
  agent?: string;
  locator?: string;
  permission_request?: string | null;
  pending_tool?: string | null;
  pending_summary?: string | null;
}

export interface PageHost {
  reachable: boolean;
  stale: boolean;
  actions_allowed?: string[];
  actions_by_agent?: Record<string, Record<string, string>> | null;
  shares_prompt?: boolean | null;
  clock_offset_ms?: number | null;
  last_seen_ms?: number | null;
}

export interface PageFilters {
  state: string[];
  host: string[];
  agent: string[];
}

export const CLASSES: StateClass[];
export const GLYPH: Record<StateClass, string>;
export function classOf(row: Pick<PageRow, 'state' | 'attention'>): StateClass;
export function countClasses(rows: readonly Pick<PageRow, 'state' | 'attention'>[]): Record<StateClass, number>;
export function rowActions(row: Pick<PageRow, 'state' | 'detail' | 'stale' | 'agent' | 'permission_request'>, host: PageHost | undefined, role: string): string[];
export const ACTION_VERB: Record<string, string>;
export function actionLabel(action: string, row: Pick<PageRow, 'agent' | 'host' | 'locator' | 'pane'>): string;
export const NOT_SHARED: string;
export function askText(row: PageRow, host?: Pick<PageHost, 'shares_prompt'> | null): string;
export function detailWord(row: Pick<PageRow, 'state' | 'detail'>, host?: Pick<PageHost, 'shares_prompt'> | null): string | null;
export function ageMs(row: PageRow, host: PageHost | undefined, hubNow: number): number | null;
export function needsYou<R extends PageRow>(rows: readonly R[], hostsByName: Map<string, PageHost>): R[];
export function parseFilters(search: string): PageFilters;
export function filtersQuery(f: PageFilters): string;
export function passes(f: PageFilters, row: PageRow): boolean;
export function tabTitle(count: number): string;
export function shortDuration(ms: number): string;
export function rowKey(row: Pick<PageRow, 'host' | 'server' | 'pane'>): string;
export function serverLabel(server: string): string;
export function newSlot(): string;

export function sseEvents(text: string): { events: string[]; rest: string };
export class SseSplitter {
  push(chunk: string): string[];
}
