// `tma --hub URL mute`: silence a pane's notifications on whichever host it runs, through the hub.
// The host writes the mute itself (its clock sets the end) unless its `[remote] allow_mute = false`.

import type { FleetDocument, FleetRow } from '../../shared/fleet.js';
import { muteResultSchema, type MuteResult } from '../../shared/protocol.js';
import { safeLines } from '../../shared/terminal-text.js';
import { isEmptySelector } from '../../shared/selectors.js';
import { UsageError, type Parsed } from '../args.js';
import type { MUTE } from '../verb-flags.js';
import { muteWindowOf } from '../mute-window.js';
import { ExitError, guard } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { pickRow } from './act-verb.js';
import { getJson, hubTarget, postJson, selectorQuery } from './hub-client.js';

const REASON_WORDS: Record<string, string> = {
  'not-allowed': 'the host does not let a hub mute its panes ([remote] allow_mute = false)',
  'not-supported': "the host's collector is too old to be muted remotely",
  undelivered: 'the host is not connected; nothing was changed',
  unanswered: 'the host did not answer in time; ask again (a mute is safe to repeat)',
  'pane-gone': 'the pane is gone',
};

function note(r: MuteResult, label: string): string {
  const head = `${r.pane} on ${r.host}`;
  if (r.outcome === 'muted') return `muted ${label}: ${head}`;
  if (r.outcome === 'unmuted') return `unmuted: ${head}`;
  return `${head}: ${r.outcome}${r.reason ? ` (${REASON_WORDS[r.reason] ?? r.reason})` : ''}`;
}

export async function main(p: Parsed<typeof MUTE>): Promise<number> {
  if (p.positionals.length) throw new UsageError(`unexpected argument "${p.positionals[0]}"`);
  const sel = selectorFrom(p, { fleet: true });
  const { clear, window } = muteWindowOf(p);
  const pane = p.opts.pane ?? null;
  const server = p.opts.server ?? null;
  if (pane !== null && !/^%\d+$/.test(pane)) throw new UsageError(`--pane takes a pane id like %3, got "${pane}"`);
  if (pane !== null && !isEmptySelector({ ...sel, host: null })) throw new UsageError('--pane cannot be combined with selector flags other than --host');
  if (pane === null && isEmptySelector(sel)) throw new UsageError('no target: give --pane (with --host) or a selector');
  const t = hubTarget(p, process.env);
  const label = window === null ? 'indefinitely' : `for ${window.label}`;
  return guard(async () => {
    const doc = await getJson<FleetDocument>(t, '/v1/agents', selectorQuery(p));
    const rows = server === null ? doc.agents : doc.agents.filter((r) => r.server === server);
    let targets: FleetRow[];
    if (pane !== null) {
      const picked = pickRow(rows, { pane, host: p.opts.host ?? null, server });
      if (picked.kind === 'fail') throw new ExitError(picked.message, picked.code);
      targets = [picked.row];
    } else {
      // A selector means every match, as the local verb does.
      if (rows.length === 0) throw new ExitError('no agent pane matches', 3);
      targets = rows;
    }
    let worst = 0;
    for (const row of targets) {
      const body = { host: row.host, server: row.server, pane: row.pane, for_ms: window?.ms ?? null, clear };
      const res = await postJson<unknown>(t, '/v1/mute', body, 30_000);
      const parsed = muteResultSchema.safeParse(res.body);
      if (res.status !== 200 || !parsed.success) {
        const err = (res.body as { error?: unknown } | null)?.error;
        process.stderr.write(`tma: ${safeLines(`mute ${row.pane} on ${row.host}: ${typeof err === 'string' ? err : `the hub answered ${res.status}`}`)}\n`);
        worst = Math.max(worst, res.status === 404 ? 3 : 1);
        continue;
      }
      const r = parsed.data;
      const line = `tma: ${safeLines(note(r, label))}\n`;
      if (r.exit_code === 0) process.stdout.write(line);
      else process.stderr.write(line);
      worst = Math.max(worst, r.exit_code);
    }
    return worst;
  });
}
