// `tma help` and `tma VERB --help`, written from the verb table: the overview lists each verb's
// overview lines by section, and one verb's help is its usage lines, then its help text.

import { visibleVerbs, type Section, type VerbTable } from './args.js';
import { VERSION } from './version.js';

const FLEET = `fleet: --hub URL (or TMA_HUB) with --token-file F (or TMA_HUB_TOKEN, a token or @path) runs
  ls, status, wait, subscribe and act against a hub, over every host; --host NAME selects one;
  act NAME --host H [--server S] --pane ID fires on that host (an operator token; --slot KEY
  replays instead of firing twice)
`;

const FOOTER = `selectors: --state LIST --agent NAME --session NAME --repo NAME --branch NAME
global flags: --socket-name/-L NAME, --socket-path/-S PATH, --config PATH, --manifest-dir DIR
  --log-level LEVEL (hub and collector; or TMA_LOG_LEVEL)
`;

/** Where a summary starts: a synopsis that leaves it less than two spaces goes on a line of its own. */
const COLUMN = 42;

function overviewLines(table: VerbTable, section: Section): string {
  let out = '';
  for (const e of Object.values(table)) {
    if (e.section !== section) continue;
    for (const [synopsis, summary] of e.overview) {
      const syn = `  ${synopsis.replaceAll('\n', '\n  ')}`;
      const sum = summary.replaceAll('\n', `\n${' '.repeat(COLUMN)}`);
      out += syn.includes('\n') || syn.length > COLUMN - 2 ? `${syn}\n${' '.repeat(COLUMN)}${sum}\n` : `${syn.padEnd(COLUMN)}${sum}\n`;
    }
  }
  return out;
}

/** `tma help`: every visible verb, by section. */
export function overview(table: VerbTable): string {
  return (
    `tma ${VERSION} — which coding agent in tmux needs you, on this machine or across a fleet\n\n` +
    'usage: tma [global flags] <command> [flags]\n\n' +
    `commands:\n${overviewLines(table, 'commands')}\n` +
    `${FLEET}${overviewLines(table, 'other')}\n` +
    `setup:\n${overviewLines(table, 'setup')}\n` +
    FOOTER
  );
}

/** `tma help VERB` and `tma VERB --help`, or null for a verb the table does not have. */
export function verbHelp(table: VerbTable, verb: string): string | null {
  const e = Object.hasOwn(table, verb) ? table[verb]! : null;
  return e ? `usage: ${[...e.usage, e.help].join('\n')}\n` : null;
}

/** The visible verb closest to a mistyped word, when it is close enough to be a likely typo. */
export const suggestVerb = (table: VerbTable, word: string): string | null => closestVerb(word, visibleVerbs(table));

/** The verb closest to a mistyped one, when it is close enough to be a likely typo. */
export function closestVerb(word: string, verbs: string[]): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const v of verbs) {
    const d = distance(word, v) - (v.startsWith(word) ? 1 : 0);
    if (d < bestD) {
      best = v;
      bestD = d;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(word.length / 2)) ? best : null;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}
