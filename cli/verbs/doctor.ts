// `tma doctor`: a read-only report of what detection sees on this server and what looks wrong.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { approveReach, type ApproveReach } from '../../collector/act/approve-reach.js';
import { loadActionSet } from '../../collector/core/action-manifest.js';
import { MULTIPLEXER_COMMANDS, REMOTE_COMMANDS } from '../../collector/core/identity.js';
import { normalizeComm } from '../../collector/core/proc.js';
import { survey, type SurveyedPane } from '../../collector/engine/survey.js';
import { bundledActionDir, readManifestFiles, userActionDir } from '../../collector/manifest-files.js';
import { readProcessTable } from '../../collector/tmux/proc-table.js';
import { lastFailure } from '../../collector/notify/failure-marker.js';
import { toJsonLine } from '../../shared/row.js';
import { safeLines } from '../../shared/terminal-text.js';
import { type Parsed } from '../args.js';
import type { DOCTOR } from '../verb-flags.js';
import { guard, openLocal } from '../local.js';
import { setupReport } from '../install/doctor-report.js';
import { renderWatch, WATCH_QUERIES, watchReport } from './doctor-watch.js';

// Guarded writes need set-option -F expanding formats (tmux 3.2); older servers get advisory writes.
const MIN_TMUX = '3.2';
const COMM_MAX = 15;

function below(version: string | null, min: string): boolean {
  if (!version) return false;
  const a = version
    .match(/\d+(\.\d+)?/)?.[0]
    .split('.')
    .map(Number) ?? [0];
  const b = min.split('.').map(Number);
  return (a[0] ?? 0) < (b[0] ?? 0) || ((a[0] ?? 0) === (b[0] ?? 0) && (a[1] ?? 0) < (b[1] ?? 0));
}

function agentEntry(p: SurveyedPane, now: number, wiring: Map<string, string>, reach: ApproveReach | null) {
  const id = p.identity?.kind === 'agent' ? p.identity : null;
  const name = id?.manifest.name ?? p.rec.options['@agent_name'] ?? '';
  const registered = p.rec.options['@agent_session'] !== undefined;
  const hookless = id ? id.manifest.hooks === null : false;
  // Without installed hooks we can still read the screen: tier 1. A registered session proves a
  // lifecycle hook reached us: tier 2 (no daemon tier in this build).
  const hookStatus = hookless ? 'hookless' : registered ? 'wired' : (wiring.get(name) ?? 'not_installed');
  return {
    pane: p.rec.paneId,
    agent: name,
    locator: p.locator,
    state: p.stamp?.state ?? null,
    source: p.stamp?.source ?? null,
    evidence_age_ms: p.stamp && p.stamp.evidenceAt > 0 ? Math.max(0, now - p.stamp.evidenceAt) : null,
    hook_status: hookStatus,
    hooks_wired: hookStatus === 'wired',
    model: p.rec.options['@agent_model'] ?? null,
    window_covered: null,
    // Only the API lane has an endpoint to be right or wrong about.
    endpoint_ok: reach?.lane === 'api' ? reach.reachable : null,
    hook_demoted: false,
    tier: hookStatus === 'wired' ? 2 : 1,
    tier_reason: hookStatus === 'wired' ? null : hookStatus === 'hookless' ? 'agent has no hook integration' : 'no hook event seen from this pane',
    approve_reachable: reach?.reachable ?? false,
    approve_reason: reach === null ? 'no agent identified on this pane' : reach.reason,
    // How an approve answers this pane now: its agent's waiting PermissionRequest hook, else the
    // API or keys lane. `hook_lane` says whether a permission request can wait on the hook at all.
    answer_lane: (p.rec.options['@tma_hook_request'] ?? '') !== '' ? 'hook' : (reach?.lane ?? null),
    hook_lane: id !== null && hookStatus === 'wired' && (id.manifest.hooks?.map.some((e) => e.event === 'PermissionRequest') ?? false),
  };
}

export async function main(p: Parsed<typeof DOCTOR>): Promise<number> {
  const json = p.opts.json === true;
  const exitCode = p.opts['exit-code'] === true;
  return guard(async () => {
    const local = await openLocal(p, { quietManifests: true });
    try {
      const now = Date.now();
      const s = await survey(local.engine.runner, local.engine.manifests, readProcessTable);
      const actions = loadActionSet(readManifestFiles(bundledActionDir()), readManifestFiles(userActionDir(process.env)));
      const wrapperPath = fileURLToPath(new URL('../../../bin/tma-hook', import.meta.url));
      const processNameIssues = local.engine.manifests.flatMap((m) =>
        m.identity.processNames.filter((n) => n.length > COMM_MAX).map((n) => ({ agent: m.name, name: n, comm_max: COMM_MAX })),
      );
      const remote = s.panes.filter((x) => REMOTE_COMMANDS.includes(normalizeComm(x.rec.currentCommand)));
      const nested = s.panes.filter((x) => MULTIPLEXER_COMMANDS.includes(normalizeComm(x.rec.currentCommand)));
      const ignored = s.panes.filter((x) => x.ignored);
      const stampIssues = s.panes.filter((x) => x.problem !== null);
      const agents = s.panes.filter((x) => !x.ignored && (x.identity?.kind === 'agent' || x.stamp !== null));
      const setup = await setupReport(local.engine.manifests, local.target, process.env, p.globals.config);
      const wiring = new Map(setup.hook_wiring.map((w) => [w.agent, w.hook_status]));
      // Aged from when tmux answered: the collector may have renewed its heartbeat since `now`.
      const watchOuts = await local.engine.runner.runChain(WATCH_QUERIES);
      const watch = watchReport(watchOuts, Date.now(), local.config.fold.freshnessMs);
      // Whether an approve could reach each agent pane (the API lane's endpoint is tried, in parallel).
      const reaches = await Promise.all(
        agents.map((x) => {
          const name = x.identity?.kind === 'agent' ? x.identity.manifest.name : (x.rec.options['@agent_name'] ?? '');
          if (!actions.ok || name === '') return Promise.resolve(null);
          return approveReach(actions.actions, name, x.rec.options['@agent_api_endpoint'] ?? null, local.config.apiBase);
        }),
      );
      const doc = {
        schema: 1,
        tmux: { version: s.tmuxVersion, min_version: MIN_TMUX, below_min: below(s.tmuxVersion, MIN_TMUX) },
        daemon: { alive: false, socket: null, version: null, version_matches: null },
        ambient_driver: { polling: s.lastPoll !== null, last_poll_age_ms: s.lastPoll !== null ? Math.max(0, now - s.lastPoll) : null },
        clients: { attached: s.attachedClients },
        status_option: { enabled: s.statusEnabled },
        mouse: { bindings_installed: setup.mouseBindings, enabled: false },
        watch: { running: false, watchers: 0 },
        wrapper: existsSync(wrapperPath) ? setup.wrapper : { path: wrapperPath, reference: wrapperPath, present: false },
        notify: { last_failure: lastFailure(process.env) },
        process_walk: { ok: s.walkError === null, error: s.walkError },
        tmux_hooks: setup.tmux_hooks,
        manifests: { ok: local.engine.manifests.length, issues: local.manifestIssues.map((i) => ({ file: i.file, problem: i.problem })) },
        process_name_issues: processNameIssues,
        nested_multiplexers: nested.map((x) => ({ pane: x.rec.paneId, locator: x.locator, command: x.rec.currentCommand })),
        remote_panes: remote.map((x) => ({ pane: x.rec.paneId, locator: x.locator, command: x.rec.currentCommand, stamped: x.stamp !== null })),
        ignored_panes: ignored.map((x) => ({ pane: x.rec.paneId, locator: x.locator, value: x.rec.options['@agent_ignore'] ?? '' })),
        stamp_issues: stampIssues.map((x) => ({ pane: x.rec.paneId, locator: x.locator, problem: x.problem! })),
        agents: agents.map((x, i) => agentEntry(x, now, wiring, reaches[i]!)),
        actions: actions.ok ? { ok: actions.actions.length, issues: [] } : { ok: 0, issues: actions.issues.map((i) => ({ file: i.file, problem: i.problem })) },
        hook_wiring: setup.hook_wiring,
        heartbeat: watch.heartbeat,
        output_watch: watch.output_watch,
      };
      // Counted: what a person should fix. Remote, nested and ignored panes are choices, not faults;
      // a status line switched off hides every status-bar segment, so it is a fault.
      const warnings =
        doc.manifests.issues.length +
        doc.actions.issues.length +
        processNameIssues.length +
        stampIssues.length +
        (s.walkError ? 1 : 0) +
        (doc.wrapper.present ? 0 : 1) +
        (doc.status_option.enabled ? 0 : 1) +
        setup.warnings +
        (doc.notify.last_failure ? 1 : 0);
      // Session names, locators, models, commands and notify reasons are pane text: made inert here.
      if (json) process.stdout.write(`${toJsonLine(doc)}\n`);
      else process.stdout.write(safeLines(renderText(doc) + setup.lines.map((l) => `${l}\n`).join('')));
      if (exitCode && warnings > 0) {
        process.stderr.write(`tma: doctor: ${warnings} warning(s), 0 pane(s) below the expected tier\n`);
        return 1;
      }
      return 0;
    } finally {
      local.close();
    }
  });
}

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function renderText(d: Doc): string {
  const out: string[] = [];
  out.push(`tmux: ${d.tmux.version ?? 'unknown'}${d.tmux.below_min ? ` (below ${d.tmux.min_version}: writes are unguarded)` : ''}`);
  out.push(`ambient: ${d.ambient_driver.polling ? `last poll ${d.ambient_driver.last_poll_age_ms} ms ago` : 'no poll seen yet'}`);
  out.push(`clients: ${d.clients.attached} attached`);
  out.push(...renderWatch({ heartbeat: d.heartbeat, output_watch: d.output_watch }));
  out.push(`wrapper: ${d.wrapper.present ? d.wrapper.path : `missing (${d.wrapper.path})`}`);
  out.push(`agents: ${d.manifests.ok} manifest(s) loaded${d.manifests.issues.length ? `, ${d.manifests.issues.length} skipped` : ''}`);
  for (const i of d.manifests.issues) out.push(`  manifest ${i.file}: ${i.problem}`);
  out.push(
    `actions: ${d.actions.ok} loaded${d.actions.issues.length ? `, broken: ${d.actions.issues.map((i: Doc) => `${i.file}: ${i.problem}`).join('; ')}` : ''}`,
  );
  if (!d.status_option.enabled) out.push('status: the tmux status line is off, so a status-bar segment will not show');
  if (d.notify.last_failure) {
    const f = d.notify.last_failure;
    out.push(`notify: the last notify command failed (${f.reason}) at ${new Date(f.at).toISOString()}: ${f.command}`);
  }
  if (!d.process_walk.ok) out.push(`procs: the process table could not be read: ${d.process_walk.error}`);
  for (const i of d.process_name_issues) out.push(`procs: ${i.agent} process name "${i.name}" is longer than ${i.comm_max} characters and can never match`);
  if (d.remote_panes.length) out.push(`remote: ${d.remote_panes.map((r: Doc) => `${r.pane} (${r.command})`).join(', ')}`);
  if (d.nested_multiplexers.length) out.push(`nested: ${d.nested_multiplexers.map((r: Doc) => `${r.pane} (${r.command})`).join(', ')}`);
  if (d.ignored_panes.length) out.push(`ignored: ${d.ignored_panes.map((r: Doc) => r.pane).join(', ')}`);
  for (const i of d.stamp_issues) out.push(`stamp: ${i.pane} ${i.locator}: ${i.problem}`);
  out.push(`panes (${d.agents.length}):`);
  for (const a of d.agents) {
    out.push(
      `  ${a.pane} ${a.locator} ${a.agent}: ${a.state ?? 'not stamped'}${a.source ? ` via ${a.source}` : ''}` +
        `${a.evidence_age_ms !== null ? `, evidence ${Math.round(a.evidence_age_ms / 1000)}s old` : ''}; hooks ${a.hook_status}, tier ${a.tier}` +
        `; approve ${a.approve_reachable ? 'can reach it' : `cannot: ${a.approve_reason}`}` +
        (a.answer_lane ? `; lane ${a.answer_lane}${a.hook_lane && a.answer_lane !== 'hook' ? ' (hook while a request waits)' : ''}` : ''),
    );
  }
  return `${out.join('\n')}\n`;
}
