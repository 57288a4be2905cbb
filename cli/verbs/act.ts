// `tma act`: fire a named action at agent panes through the broker, or list / preview actions.
// Also the hidden `tma supervise`, the process a detached exec action runs under.

import { createInterface } from 'node:readline';
import type { ActionManifest } from '../../collector/core/action-manifest.js';
import { fireAction, processAlive } from '../../collector/act/broker.js';
import { readPaneFacts } from '../../collector/act/facts.js';
import { humanNote, resultObject, resultsEnvelope, worstExit, type ActResult } from '../../collector/act/outcome.js';
import {
  dryRunDocument,
  dryRunMany,
  dryRunOne,
  fireability,
  listObject,
  listText,
  paneLane,
  type ListEntry,
  type PreviewContext,
} from '../../collector/act/preview.js';
import { supervise } from '../../collector/act/supervise.js';
import { planTargets } from '../../collector/act/targets.js';
import { loadActions } from '../../collector/manifest-files.js';
import { openRunner } from '../../collector/tmux/runner.js';
import { targetFlags, tmuxBin } from '../../collector/tmux/target.js';
import { isEmptySelector } from '../../shared/selectors.js';
import { toJsonLine } from '../../shared/row.js';
import { safeLines } from '../../shared/terminal-text.js';
import { UsageError, type Parsed } from '../args.js';
import type { ACT, SUPERVISE } from '../verb-flags.js';
import { ExitError, guard, targetOf, type Local } from '../local.js';
import { selectorFrom } from '../selector-opts.js';
import { panesAcross, type PickedOn } from '../targets.js';
import { agentServersHint, openForPane, openLocals, serverFlag, socketOf } from '../servers.js';

const FIRE_FLAGS = ['all', 'dry-run', 'arg', 'force', 'yes', 'slot', 'expect-episode-ms', 'expect-permission-request', 'expect-prompt', 'again'] as const;

function binderValues(p: Parsed<typeof ACT>): { expectEpisodeMs: number | null; expectPermissionRequest: string | null; expectPrompt: string | null } {
  const prompt = p.opts['expect-prompt'];
  if (prompt !== undefined && !/^[A-Za-z0-9._:-]{1,64}$/.test(prompt)) throw new UsageError(`--expect-prompt needs a prompt id, got "${prompt}"`);
  const ep = p.opts['expect-episode-ms'];
  const req = p.opts['expect-permission-request'];
  if (req === '') throw new UsageError('--expect-permission-request needs a request id');
  return { expectEpisodeMs: ep ?? null, expectPermissionRequest: req ?? null, expectPrompt: prompt ?? null };
}

function loadActionSet(): ActionManifest[] {
  const set = loadActions({ env: process.env });
  if (set.ok) return set.actions;
  for (const i of set.issues) process.stderr.write(`tma: ${i.file}: ${i.problem}\n`);
  throw new ExitError('action load failed', 1);
}

async function confirmBatch(action: ActionManifest, panes: string[]): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(`tma: ${action.label} (${action.name}) on ${panes.join(' ')}? [y/N] `, resolve));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

export async function main(p: Parsed<typeof ACT>): Promise<number> {
  const o = p.opts;
  const list = o.list === true;
  const name = p.positionals[0];
  if (p.positionals.length > 1) throw new UsageError(`unexpected argument "${p.positionals[1]}"`);
  const sel = selectorFrom(p, { fleet: false });
  const pane = o.pane ?? null;
  const all = o.all === true;
  if (list) {
    if (name !== undefined) throw new UsageError('--list takes no action name');
    if (o.agent !== undefined) throw new UsageError('--list cannot be combined with --agent');
    const used = FIRE_FLAGS.find((f) => o[f] !== undefined);
    if (used) throw new UsageError(`--list cannot be combined with --${used}`);
  } else if (name === undefined) {
    throw new UsageError('act needs an action name (or --list)');
  }
  if (pane !== null && o.agent !== undefined) throw new UsageError('--pane cannot be combined with --agent');
  const binders = binderValues(p);
  const slot = o.slot ?? null;
  if (slot === '') throw new UsageError('--slot needs a key');
  // A receipt and a binder each name one dispatch to one pane; a fan-out has many.
  if (all && (slot !== null || binders.expectEpisodeMs !== null || binders.expectPermissionRequest !== null || binders.expectPrompt !== null)) {
    throw new UsageError('--slot and --expect-* name a single pane; they cannot be combined with --all');
  }
  const args = o.arg ?? [];

  return guard(
    async () => {
      const actions = loadActionSet();
      if (list) return listActions(p, actions, pane);
      const action = actions.find((a) => a.name === name);
      if (!action) throw new UsageError(`unknown action "${name}" (known: ${actions.map((a) => a.name).join(', ')})`);
      if (args.length && action.kind === 'keys') throw new UsageError(`--arg is for exec actions; "${action.name}" is a keys action`);

      const plan = planTargets({ pane, selectorEmpty: isEmptySelector(sel), all, tmuxPane: process.env.TMUX_PANE ?? null });
      if (plan.kind === 'usage') throw new UsageError(plan.message);

      // A pane id names one server: outside tmux, whichever of the user's servers holds that agent.
      // A selector looks at every server there, and keys go to each pane on its own server.
      const locals = plan.kind === 'pane' ? [await openForPane(p, plan.pane)] : await openLocals(p);
      try {
        const picked: PickedOn =
          plan.kind === 'pane' ? { kind: 'ok', batches: [{ local: locals[0]!, panes: [plan.pane] }] } : await panesAcross(locals, sel, all);
        if (picked.kind === 'fail') {
          if (picked.code === 2) throw new UsageError(picked.message);
          throw new ExitError(picked.message, picked.code);
        }
        const batches = picked.batches;
        const ctxOf = (local: Local): PreviewContext => ({ engine: local.engine, apiBase: local.config.apiBase, now: Date.now(), pidAlive: processAlive });

        if (o['dry-run'] === true) {
          if (batches.length === 1) {
            const { local, panes } = batches[0]!;
            const runner = local.engine.runner;
            if (o.json === true) {
              process.stdout.write(`${toJsonLine(await dryRunDocument(runner, action, panes, ctxOf(local), args, all))}\n`);
              return 0;
            }
            // What the pane asks, its locator, cwd and session id are pane text: made inert here.
            process.stdout.write(
              safeLines(all ? await dryRunMany(runner, action, panes, ctxOf(local)) : await dryRunOne(runner, action, panes[0]!, ctxOf(local), args)),
            );
            return 0;
          }
          // --all over several servers: one document (one list) with every server's targets.
          const parts = [];
          for (const { local, panes } of batches) {
            parts.push({
              doc: await dryRunDocument(local.engine.runner, action, panes, ctxOf(local), args, true),
              text: await dryRunMany(local.engine.runner, action, panes, ctxOf(local)),
              server: serverFlag(socketOf(local)),
            });
          }
          if (o.json === true) {
            const targets = parts.flatMap((x) => x.doc.targets as unknown[]);
            process.stdout.write(`${toJsonLine({ ...parts[0]!.doc, targets })}\n`);
          } else {
            // Pane ids repeat across servers: each line says which server its pane is on.
            const lines = parts.flatMap((x) =>
              x.text
                .trimEnd()
                .split('\n')
                .slice(1)
                .map((l) => `${l} on ${x.server}`),
            );
            process.stdout.write(safeLines(`targets: ${lines.length}\n${lines.map((l) => `${l}\n`).join('')}`));
          }
          return 0;
        }

        let yes = o.yes === true;
        if (action.confirm && !yes)
          yes = await confirmBatch(
            action,
            batches.flatMap((b) => b.panes),
          );
        const config = p.globals.config;
        const results: ActResult[] = [];
        for (const { local, panes } of batches) {
          for (const target of panes) {
            const r = await fireAction({
              runner: local.engine.runner,
              engine: local.engine,
              action,
              pane: target,
              binders,
              slot,
              force: o.force === true,
              again: o.again === true,
              yes,
              args,
              apiBase: local.config.apiBase,
              // The reference re-detects a keys stamp older than a fixed 3 s; we use the same staleness
              // window the fold uses ([fold] freshness_secs, default 3 s), so one knob governs both.
              freshnessMs: local.config.fold.freshnessMs,
              serverFlags: [...targetFlags(local.target), ...(config ? ['--config', config] : [])],
              onNote: (m) => process.stderr.write(`tma: ${safeLines(`${action.name} ${target}: ${m}`)}\n`),
            });
            const n = humanNote(r);
            if (n !== null) process.stderr.write(`tma: ${safeLines(n)}\n`);
            results.push(r);
          }
        }
        if (o.json === true) process.stdout.write(`${toJsonLine(all ? resultsEnvelope(results) : resultObject(results[0]!))}\n`);
        return all ? worstExit(results) : results[0]!.exit_code;
      } finally {
        for (const l of locals) l.close();
      }
    },
    () => agentServersHint(p, null),
  );
}

async function listActions(p: Parsed<typeof ACT>, actions: ActionManifest[], pane: string | null): Promise<number> {
  let entries: ListEntry[] = actions.map((action) => ({ action }));
  if (pane !== null) {
    const local = await openForPane(p, pane);
    try {
      const f = await readPaneFacts(local.engine.runner, pane);
      if (f === null) throw new ExitError(`pane ${pane} is gone`, 3);
      const ctx: PreviewContext = { engine: local.engine, apiBase: local.config.apiBase, now: Date.now(), pidAlive: processAlive };
      entries = actions.map((action) => {
        const reason = fireability(action, f, ctx);
        return { action, verdict: { fireable: reason === null, reason, lane: paneLane(action, f, local.config.apiBase) } };
      });
    } finally {
      local.close();
    }
  }
  process.stdout.write(p.opts.json === true ? `${toJsonLine(listObject(entries))}\n` : safeLines(listText(entries)));
  return 0;
}

/** Hidden: `tma supervise --pane P --name N --nonce X --timeout-ms T -- COMMAND`. */
export async function superviseMain(p: Parsed<typeof SUPERVISE>): Promise<number> {
  const pane = p.opts.pane;
  const name = p.opts.name;
  const nonce = p.opts.nonce;
  const timeoutMs = p.opts['timeout-ms'] ?? 0;
  const command = p.positionals[0];
  if (!pane || !name || !nonce || !(timeoutMs > 0) || command === undefined) throw new UsageError('supervise: missing arguments');
  const runner = await openRunner(targetOf(p), { mode: 'spawn', bin: tmuxBin(process.env) });
  try {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    const end = await supervise(runner, { pane, name, nonce, timeoutMs, command }, env);
    return end.kind === 'exited' ? end.code : end.kind === 'timeout' ? 124 : 1;
  } finally {
    runner.close();
  }
}
