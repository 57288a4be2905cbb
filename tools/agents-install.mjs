#!/usr/bin/env node
// Install the real agent CLIs the suite runs, at every version pinned in agents-versions.mjs, each
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
function complete(name, version) {
  const a = AGENTS[name];
  const prefix = agentPrefix(name, version);
  const marker = join(prefix, MARKER);
  if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === `${a.pkg}@${version}` && existsSync(agentBin(name, version))) return true;
  let installed = '';
  try {
    installed = JSON.parse(readFileSync(join(prefix, 'node_modules', a.pkg, 'package.json'), 'utf8')).version;
  } catch {
    return false;
  }
  if (installed !== version || !answers(name, version)) return false;
  writeFileSync(marker, `${a.pkg}@${version}\n`);
  return true;
}

/** Why the last `--version` did not answer, for the error. */
let lastAnswer = '';

function answers(name, version) {
  // A first start right after the install can be slow on a loaded machine (Gemini CLI's took over a
  // minute on ours while other suites ran): a timeout here is not a broken install.
  const r = spawnSync(agentBin(name, version), ['--version'], {
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, HOME: agentPrefix(name, version) },
  });
  lastAnswer = r.error ? r.error.message : `exit ${r.status}${r.signal ? ` (${r.signal})` : ''}: ${`${r.stdout}${r.stderr}`.trim().slice(0, 200)}`;
  // pi prints its version on stderr.
  return r.status === 0 && `${r.stdout}${r.stderr}`.includes(version);
}

function install(name, version) {
  const a = AGENTS[name];
  const prefix = agentPrefix(name, version);
  // A half-finished prefix is started over, so nothing of a killed run is trusted.
  rmSync(prefix, { recursive: true, force: true });
  mkdirSync(prefix, { recursive: true });
  const r = spawnSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', `${a.pkg}@${version}`], {
    encoding: 'utf8',
    timeout: 15 * 60_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  writeFileSync(join(prefix, 'install.log'), `${r.stdout ?? ''}${r.stderr ?? ''}`);
  if (r.status !== 0) throw new Error(`npm install ${a.pkg}@${version} failed (exit ${r.status}); see ${join(prefix, 'install.log')}`);
  if (!answers(name, version)) throw new Error(`${agentBin(name, version)} --version does not answer ${version} after install (${lastAnswer})`);
  writeFileSync(join(prefix, MARKER), `${a.pkg}@${version}\n`);
}

/** The first install's time as recorded in the prefix; null for a prefix installed by hand. */
function firstInstall(name, version) {
  try {
    const ms = Number(readFileSync(join(agentPrefix(name, version), FIRST), 'utf8').trim());
    return Number.isFinite(ms) && ms >= 0 ? ms : null;
  } catch {
    return null;
  }
}

/**
 * What to install: each name alone means every version the suite pins for it; `name@version`
 * means that one (tools/agents-newest.mjs installs versions nobody pinned yet).
 */
export function installList(names = Object.keys(AGENTS)) {
  return names.flatMap((n) => {
    const at = n.lastIndexOf('@');
    const name = at > 0 ? n.slice(0, at) : n;
    if (!(name in AGENTS)) throw new Error(`unknown agent ${JSON.stringify(name)} (${Object.keys(AGENTS).join(', ')})`);
    return at > 0 ? [{ name, version: n.slice(at + 1) }] : AGENTS[name].versions.map((version) => ({ name, version }));
  });
}

/** Install what is missing; returns one line per agent version and the total time. */
export function installAgents(names = Object.keys(AGENTS)) {
  const start = Date.now();
  const list = installList(names);
  const lines = [];
  let fresh = 0;
  for (const { name, version } of list) {
    const t = Date.now();
    const cached = complete(name, version);
    if (!cached) {
      install(name, version);
      writeFileSync(join(agentPrefix(name, version), FIRST), `${Date.now() - t}\n`);
      fresh++;
    }
    const first = firstInstall(name, version);
    const firstText = cached ? (first === null ? ' (first install not recorded: installed by hand)' : ` (first install ${(first / 1000).toFixed(1)} s)`) : '';
    lines.push(`  ${name.padEnd(9)} ${version.padEnd(9)} ${cached ? 'cached' : 'installed'} in ${((Date.now() - t) / 1000).toFixed(1)} s${firstText}`);
  }
  const ms = Date.now() - start;
  const firsts = list.map(({ name, version }) => firstInstall(name, version));
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
