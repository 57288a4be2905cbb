#!/usr/bin/env node
// Install the real agent CLIs the suite runs, at the versions pinned in agents-versions.mjs, each
// into its own npm prefix in a cache outside the clone (reused by later runs and other clones).
// A prefix counts as installed only once its marker file exists: the marker is written last, after
// npm finished and the executable answered --version, so an install killed half-way is redone.
// Prints, per agent and in total, how long it took and whether it came from the cache.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGENTS, agentBin, agentPrefix, agentsCache } from './agents-versions.mjs';

const MARKER = '.tma-installed';
/** How long the install that filled the prefix took (ms), so a cached run can still say it. */
const FIRST = '.tma-install-ms';

/** Already complete: the marker names this version, or (the lead's hand install) npm's record
 * shows exactly this version and the executable answers. Either way the marker is (re)written. */
function complete(name) {
  const a = AGENTS[name];
  const prefix = agentPrefix(name);
  const marker = join(prefix, MARKER);
  if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === `${a.pkg}@${a.version}` && existsSync(agentBin(name))) return true;
  let installed = '';
  try {
    installed = JSON.parse(readFileSync(join(prefix, 'node_modules', a.pkg, 'package.json'), 'utf8')).version;
  } catch {
    return false;
  }
  if (installed !== a.version || !answers(name)) return false;
  writeFileSync(marker, `${a.pkg}@${a.version}\n`);
  return true;
}

/** Why the last `--version` did not answer, for the error. */
let lastAnswer = '';

function answers(name) {
  // A first start right after the install can be slow on a loaded machine (Gemini CLI's took over a
  // minute on ours while other suites ran): a timeout here is not a broken install.
  const r = spawnSync(agentBin(name), ['--version'], { encoding: 'utf8', timeout: 300_000, env: { ...process.env, HOME: agentPrefix(name) } });
  lastAnswer = r.error ? r.error.message : `exit ${r.status}${r.signal ? ` (${r.signal})` : ''}: ${`${r.stdout}${r.stderr}`.trim().slice(0, 200)}`;
  // pi prints its version on stderr.
  return r.status === 0 && `${r.stdout}${r.stderr}`.includes(AGENTS[name].version);
}

function install(name) {
  const a = AGENTS[name];
  const prefix = agentPrefix(name);
  // A half-finished prefix is started over, so nothing of a killed run is trusted.
  rmSync(prefix, { recursive: true, force: true });
  mkdirSync(prefix, { recursive: true });
  const r = spawnSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', `${a.pkg}@${a.version}`], {
    encoding: 'utf8',
    timeout: 15 * 60_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  writeFileSync(join(prefix, 'install.log'), `${r.stdout ?? ''}${r.stderr ?? ''}`);
  if (r.status !== 0) throw new Error(`npm install ${a.pkg}@${a.version} failed (exit ${r.status}); see ${join(prefix, 'install.log')}`);
  if (!answers(name)) throw new Error(`${agentBin(name)} --version does not answer ${a.version} after install (${lastAnswer})`);
  writeFileSync(join(prefix, MARKER), `${a.pkg}@${a.version}\n`);
}

/** The first install's time as recorded in the prefix; null for a prefix installed by hand. */
function firstInstall(name) {
  try {
    const ms = Number(readFileSync(join(agentPrefix(name), FIRST), 'utf8').trim());
    return Number.isFinite(ms) && ms >= 0 ? ms : null;
  } catch {
    return null;
  }
}

/** Install what is missing; returns one line per agent and the total time. */
export function installAgents(names = Object.keys(AGENTS)) {
  const start = Date.now();
  const lines = [];
  let fresh = 0;
  for (const name of names) {
    const t = Date.now();
    const cached = complete(name);
    if (!cached) {
      install(name);
      writeFileSync(join(agentPrefix(name), FIRST), `${Date.now() - t}\n`);
      fresh++;
    }
    const first = firstInstall(name);
    const firstText = cached ? (first === null ? ' (first install not recorded: installed by hand)' : ` (first install ${(first / 1000).toFixed(1)} s)`) : '';
    lines.push(
      `  ${name.padEnd(9)} ${AGENTS[name].version.padEnd(9)} ${cached ? 'cached' : 'installed'} in ${((Date.now() - t) / 1000).toFixed(1)} s${firstText}`,
    );
  }
  const ms = Date.now() - start;
  const firsts = names.map(firstInstall);
  const firstTotal = firsts.every((x) => x !== null) ? `; first run took ${(firsts.reduce((a, b) => a + b, 0) / 1000).toFixed(1)} s` : '';
  return {
    ms,
    fresh,
    text: `agents (${agentsCache()}): ${fresh ? 'first run' : 'cached'}, ${(ms / 1000).toFixed(1)} s${fresh ? '' : firstTotal}\n${lines.join('\n')}`,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    console.log(installAgents(process.argv.slice(2).length ? process.argv.slice(2) : undefined).text);
  } catch (e) {
    console.error(`agents-install: ${e.message}`);
    process.exit(1);
  }
}
