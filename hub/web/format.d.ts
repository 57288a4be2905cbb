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
}

export interface PageHost {
  reachable: boolean;
  stale: boolean;
  actions_allowed?: string[];
}

export const CLASSES: StateClass[];
export const GLYPH: Record<StateClass, string>;
export function classOf(row: Pick<PageRow, 'state' | 'attention'>): StateClass;
export function countClasses(rows: readonly Pick<PageRow, 'state' | 'attention'>[]): Record<StateClass, number>;
export function rowActions(row: Pick<PageRow, 'state' | 'detail' | 'stale'>, host: PageHost | undefined, role: string): string[];
export function shortDuration(ms: number): string;
export function rowKey(row: Pick<PageRow, 'host' | 'server' | 'pane'>): string;
export function serverLabel(server: string): string;
export function newSlot(): string;

export class AgeBook {
  observe(rows: readonly PageRow[], now: number): void;
  ageMs(row: PageRow, now: number): number | null;
}

export function sseEvents(text: string): { events: string[]; rest: string };
