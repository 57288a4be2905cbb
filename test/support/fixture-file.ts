// Reader for capture fixture files: six `# key: value` header lines, a `---` line, then the
// pane capture exactly as tmux printed it (escapes and trailing blanks included).

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { isState } from '../../shared/tokens.js';
import type { Snapshot, State } from '../../collector/core/types.js';

export interface Fixture {
  agent: string;
  /** The label recorded at capture time; not necessarily the verdict the engine must reach. */
  state: State;
  title: string;
  command: string;
  pid: number;
  /** Epoch ms, whichever unit the header used. */
  capturedAt: number;
  /** Raw capture, byte-for-byte as stored after the `---` line. */
  screen: string;
}

const HEADER_KEYS = ['agent', 'state', 'title', 'command', 'pid', 'captured_at'] as const;
type HeaderKey = (typeof HEADER_KEYS)[number];

const SEPARATOR = '---';
// Below this an epoch value can only be seconds (it is the same cut-off the store codec uses
// for legacy stamps); the fixtures mix 10-digit seconds and 13-digit milliseconds.
const MS_THRESHOLD = 1_000_000_000_000;

function isHeaderKey(k: string): k is HeaderKey {
  return (HEADER_KEYS as readonly string[]).includes(k);
}

function fail(file: string, what: string): never {
  throw new Error(`fixture ${file}: ${what}`);
}

export function parseFixture(text: string, file: string): Fixture {
  const values = new Map<HeaderKey, string>();
  let pos = 0;
  let lineNo = 0;
  let screen: string | null = null;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const line = nl < 0 ? text.slice(pos) : text.slice(pos, nl);
    const next = nl < 0 ? text.length : nl + 1;
    lineNo++;
    if (line === SEPARATOR) {
      screen = text.slice(next);
      break;
    }
    const m = /^# ([a-z_]+):(.*)$/s.exec(line);
    if (m === null) fail(file, `line ${lineNo} is neither a "# key: value" header nor "${SEPARATOR}": ${JSON.stringify(line)}`);
    const [, key = '', raw = ''] = m;
    // One separating space is syntax; anything beyond it (e.g. a title's double space) is data.
    const value = raw.startsWith(' ') ? raw.slice(1) : raw;
    if (!isHeaderKey(key)) fail(file, `line ${lineNo}: unknown header "${key}"`);
    if (values.has(key)) fail(file, `line ${lineNo}: header "${key}" given twice`);
    values.set(key, value);
    pos = next;
  }
  if (screen === null) fail(file, `no "${SEPARATOR}" line ends the header`);
  const missing = HEADER_KEYS.filter((k) => !values.has(k));
  if (missing.length > 0) fail(file, `missing header${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
  const get = (k: HeaderKey): string => values.get(k) ?? '';

  const agent = get('agent');
  if (agent === '') fail(file, 'header "agent" is empty');
  const state = get('state');
  if (!isState(state)) fail(file, `header "state" is not a state token: ${JSON.stringify(state)}`);
  const command = get('command');
  if (command === '') fail(file, 'header "command" is empty');
  const pidText = get('pid');
  if (!/^\d+$/.test(pidText)) fail(file, `header "pid" is not a non-negative integer: ${JSON.stringify(pidText)}`);
  const atText = get('captured_at');
  if (!/^\d+$/.test(atText)) fail(file, `header "captured_at" is not an integer epoch: ${JSON.stringify(atText)}`);
  const at = Number(atText);
  if (!Number.isSafeInteger(at) || at === 0) fail(file, `header "captured_at" is out of range: ${atText}`);

  return {
    agent,
    state,
    title: get('title'),
    command,
    pid: Number(pidText),
    capturedAt: at < MS_THRESHOLD ? at * 1000 : at,
    screen,
  };
}

/** Read and parse a fixture file; errors name the file by its base name. */
export function loadFixture(path: string): Fixture {
  return parseFixture(readFileSync(path, 'utf8'), basename(path));
}

export interface SnapshotOptions {
  /** Pane height for `visible` rules; absent means unknown (the whole capture). */
  visibleHeight?: number | null;
  /** Added to the capture time, for tests that need the snapshot taken later. */
  offsetMs?: number;
}

/** The snapshot the poll cycle would have built for this capture (never scrolled). */
export function snapshotOf(fixture: Fixture, opts: SnapshotOptions = {}): Snapshot {
  return {
    title: fixture.title,
    tail: fixture.screen,
    visibleHeight: opts.visibleHeight ?? null,
    scrollPosition: null,
    capturedAt: fixture.capturedAt + (opts.offsetMs ?? 0),
  };
}
