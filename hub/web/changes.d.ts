// Types of the page's changes-stream mirror (changes.js runs in the browser as written).

export interface MirrorRow {
  host: string;
  server: string;
  pane: string;
  state: string;
  locator: string;
  [k: string]: unknown;
}

export interface MirrorHost {
  host: string;
  [k: string]: unknown;
}

export interface MirrorDocument {
  agents: MirrorRow[];
  hosts: MirrorHost[];
  [k: string]: unknown;
}

export function compareRows(a: MirrorRow, b: MirrorRow): number;

export class FleetMirror {
  base: Record<string, unknown> | null;
  rows: MirrorRow[];
  hosts: Map<string, MirrorHost>;
  apply(msg: unknown): MirrorDocument | null;
  document(): MirrorDocument;
}
