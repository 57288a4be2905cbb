// The serialised side of the store. Each row is encoded once, when it arrives; a host keeps its
// rows' text grouped by state rank, so the fleet document (state rank, then host, server, locator)
// is a concatenation of per-host pieces, and a change re-sorts and re-encodes one host only.

import { fleetRowObject, type FleetRow } from '../../shared/fleet.js';
import { PROTOCOL_ROW_KEYS, type ProtocolRow } from '../../shared/row.js';
import { compareFleetRows } from '../../shared/selectors.js';
import { STATE_RANK } from '../../shared/tokens.js';

export const RANKS = 4;

/** One row as held: the protocol object and its JSON up to the `stale` value. */
export interface RowEntry {
  readonly row: ProtocolRow;
  readonly rank: number;
  /** `{"pane":…,"host":…,"stale":` — the host's staleness completes it. */
  readonly head: string;
}

/** The row holds exactly the contract's keys, in its order, none undefined: its own JSON is the row's text. */
function inContractOrder(row: ProtocolRow): boolean {
  let i = 0;
  for (const k in row) {
    if (k !== PROTOCOL_ROW_KEYS[i] || (row as Record<string, unknown>)[k] === undefined) return false;
    i++;
  }
  return i === PROTOCOL_ROW_KEYS.length;
}

export function rowEntry(row: ProtocolRow): RowEntry {
  // A collector writes rows in contract order, so most need no reordered copy before encoding.
  if (inContractOrder(row)) return { row, rank: STATE_RANK[row.state], head: `${JSON.stringify(row).slice(0, -1)},"stale":` };
  const text = JSON.stringify(fleetRowObject(row, false));
  // fleetRowObject puts `stale` last, so its value is the tail `false}`.
  return { row, rank: STATE_RANK[row.state], head: text.slice(0, -6) };
}

export const rowText = (e: RowEntry, stale: boolean): string => e.head + (stale ? 'true}' : 'false}');

export function fleetRow(e: RowEntry, stale: boolean): FleetRow {
  return { ...e.row, stale };
}

/** Same text means same row: nothing a reader sees changed. */
export const sameEntry = (a: RowEntry, b: RowEntry): boolean => a.head === b.head;

/** A host's rows in fleet order, one list per state rank, with each rank's rows as JSON bytes. */
export interface HostPieces {
  byRank: RowEntry[][];
  /**
   * Each rank's rows joined by commas, as UTF-8, each row led by its comma (`,{…},{…}`): a read
   * drops the first one with a view instead of writing a separate comma between hosts. Only the
   * bytes are kept (not a string as well): nothing else reads a host's rows as one text.
   */
  bytes: Buffer[];
  /** The same without the leading comma, for the document's first row: made once, shared by reads. */
  firstBytes: Buffer[];
  stale: boolean;
}

/** A rank's rows as bytes; `first` leaves out the leading comma (the document's first row). */
export function piecesBytes(p: HostPieces, rank: number, first: boolean): Buffer {
  return (first ? p.firstBytes : p.bytes)[rank]!;
}

/** Bytes of their own, outside Buffer's shared pool, so a kept piece never pins a pool slab. */
function ownBytes(text: string): Buffer {
  const b = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  b.write(text, 'utf8');
  return b;
}

export function buildPieces(entries: Iterable<RowEntry>, stale: boolean): HostPieces {
  const byRank: RowEntry[][] = Array.from({ length: RANKS }, () => []);
  for (const e of entries) byRank[e.rank]!.push(e);
  const texts: string[] = [];
  for (const list of byRank) {
    list.sort((a, b) => compareFleetRows(a.row, b.row));
    texts.push(list.length ? `,${list.map((e) => rowText(e, stale)).join(',')}` : '');
  }
  // One allocation per host, each rank a view of it: a buffer outside the pool costs far more to
  // make than to fill, and a busy fleet re-encodes about one host per delta frame.
  const all = ownBytes(texts.join(''));
  const bytes: Buffer[] = [];
  let at = 0;
  for (const t of texts) {
    const n = Buffer.byteLength(t, 'utf8');
    bytes.push(n ? all.subarray(at, at + n) : EMPTY);
    at += n;
  }
  return { byRank, bytes, firstBytes: bytes.map((b) => (b.length ? b.subarray(1) : b)), stale };
}

const EMPTY = Buffer.alloc(0);

/** Insert into a sorted array of strings (binary search): the host order changes only here. */
export function insertSorted(list: string[], v: string): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  if (list[lo] !== v) list.splice(lo, 0, v);
}

export function removeSorted(list: string[], v: string): void {
  const i = list.indexOf(v);
  if (i >= 0) list.splice(i, 1);
}
