// `tma init [--yes]`: set up this machine in one go — wire every supported agent found on $PATH,
// suggest the status line, install the key bindings, then show doctor's view.

import { openRunner } from '../../collector/tmux/runner.js';
import { tmuxBin } from '../../collector/tmux/target.js';
import { UsageError, type Parsed } from '../args.js';
import type { INIT } from '../verb-flags.js';
import { closePrompts, InstallError } from '../install/apply.js';
import { ADAPTERS } from '../install/agents.js';
import { onPath, wireAgent } from '../install/wiring.js';
import { ExitError, guard } from '../local.js';
import { contextFor } from './install-hooks.js';
import { installKeys, keysProblems, tmuxConf } from './install-keys.js';

/** Names too generic to prove an agent is installed (many tools run as `node`). */
const GENERIC = new Set(['node', 'bun', 'deno', 'python', 'python3', 'ruby', 'perl', 'sh', 'bash', 'zsh', 'fish', 'agent']);
const ORDER = ['claude', 'opencode', 'codex', 'gemini', 'cursor', 'pi'];

export async function main(p: Parsed<typeof INIT>): Promise<number> {
  if (p.positionals.length) throw new UsageError(`init takes no arguments, got ${p.positionals.join(' ')}`);
  const env = process.env;
  const yes = p.opts.yes === true;
  return guard(async () => {
    const ctx = await contextFor(p);
    if (!yes && !process.stdin.isTTY) process.stderr.write('tma: stdin is not a terminal; every prompt will be declined (use --yes)\n');
    const failed: string[] = [];
    try {
      process.stdout.write('tma: supported agents on your PATH:\n');
      const found: string[] = [];
      const installable = ctx.manifests
        .filter((m) => m.hooks && (ADAPTERS as readonly string[]).includes(m.name))
        .sort((a, b) => ORDER.indexOf(a.name) - ORDER.indexOf(b.name));
      for (const m of installable) {
        const candidates = [m.name, ...m.identity.processNames].filter((n, i, all) => !GENERIC.has(n) && all.indexOf(n) === i);
        const hit = candidates.map((c) => onPath(c, env)).find((x) => x !== null) ?? null;
        const name = m.name.padEnd(9);
        if (hit) {
          found.push(m.name);
          process.stdout.write(`  ${name}found (${hit})\n`);
        } else if (candidates.length === 0) {
          process.stdout.write(`  ${name}runs under a generic name; wire it with \`tma install-hooks ${m.name}\` if you use it\n`);
        } else process.stdout.write(`  ${name}not found (skipped; run \`tma install-hooks ${m.name}\` once it is installed)\n`);
      }
      if (found.length === 0) process.stdout.write('tma: no supported agent on your PATH; screen detection still works\n');
      for (const a of found) {
        process.stdout.write(`\ntma: wiring ${a} ...\n`);
        try {
          if (!(await wireAgent(ctx, a, { yes, backup: true }))) failed.push(`${a} hooks`);
        } catch (e) {
          if (!(e instanceof InstallError)) throw e;
          process.stderr.write(`tma: ${e.message}\n`);
          failed.push(`${a} hooks`);
        }
      }
      await suggestStatusLine(ctx.target, env, p.opts.conf);
      const keys = { mouse: false, yes, noDaemon: p.opts['no-daemon'] === true, conf: p.opts.conf, configDir: p.opts['config-dir'] };
      if (keysProblems(env, keys).length === 0) process.stdout.write('tma: key bindings already installed\n');
      else {
        try {
          if (!(await installKeys(env, keys))) failed.push('key bindings');
        } catch (e) {
          if (!(e instanceof InstallError)) throw e;
          process.stderr.write(`tma: ${e.message}\n`);
          failed.push('key bindings');
        }
      }
    } finally {
      closePrompts();
    }
    process.stdout.write('\ntma: doctor:\n');
    const doctor = await import('./doctor.js');
    await doctor.main({ ...p, verb: 'doctor', opts: {}, positionals: [] });
    if (failed.length) throw new ExitError(`init did not finish: ${failed.join(', ')}`, 1);
    return 0;
  });
}

async function suggestStatusLine(target: Parameters<typeof openRunner>[0], env: NodeJS.ProcessEnv, conf?: string): Promise<void> {
  let current = '';
  try {
    const runner = await openRunner(target, { mode: 'spawn', bin: tmuxBin(env) });
    try {
      current = (await runner.run(['show-options', '-gv', 'status-right'])).replace(/\n$/, '');
    } finally {
      runner.close();
    }
  } catch {
    current = '';
  }
  if (current.includes('tma status')) {
    process.stdout.write('tma: your status line already runs `tma status`\n');
    return;
  }
  const value = `#(tma status) ${current || '%H:%M'}`.replaceAll("'", "'\\''");
  process.stdout.write(
    `tma: to see waiting agents in the status bar, add to ${tmuxConf(env, conf).path}:\n` +
      `  set -g status-right '${value}'\n  then reload: tmux source-file ${tmuxConf(env, conf).path}\n`,
  );
}
