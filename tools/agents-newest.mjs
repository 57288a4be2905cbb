#!/usr/bin/env node
// Not run by CI. Asks npm for the newest release of each agent the suite knows, installs it into
// the agents cache beside the pinned ones, and runs the agent suite's matrix for that agent at that
// version alone: the next release that breaks detection is seen here before users see it.
// Prints one line per agent: pinned, newest, and whether the suite passed at the newest.
//   node tools/agents-newest.mjs [claude codex …]   (default: every agent; one at a time)

import { spawnSync } from 'node:child_process';
import { AGENTS } from './agents-versions.mjs';
import { installAgents } from './agents-install.mjs';

/** The newest version npm reports for a package, or the reason it could not say. */
export function newestOnNpm(pkg) {
  const r = spawnSync('npm', ['view', pkg, 'version'], { encoding: 'utf8', timeout: 60_000 });
  const v = (r.stdout ?? '').trim();
  if (r.status !== 0 || !/^\d+\.\d+\.\d+\S*$/.test(v))
    return { error: `npm view ${pkg} version: exit ${r.status}: ${`${r.stderr ?? ''}`.trim().slice(0, 200)}` };
  return { version: v };
}

/** One agent at one version through the matrix (the table goes to stdout as the suite prints it). */
function runSuite(name, version) {
  const r = spawnSync('npx', ['vitest', 'run', '--project', 'agents', 'test/agents/matrix.test.ts'], {
    encoding: 'utf8',
    timeout: 30 * 60_000,
    env: { ...process.env, TMA_AGENTS_ONLY: name, TMA_AGENTS_VERSIONS: `${name}@${version}` },
  });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  const table = out.slice(out.indexOf('real agents: every cell'));
  return { passed: r.status === 0, table: table.slice(0, table.indexOf('\nagents (')) };
}

function main(names) {
  for (const n of names) if (!(n in AGENTS)) throw new Error(`unknown agent ${JSON.stringify(n)} (${Object.keys(AGENTS).join(', ')})`);
  // dist/ is what the suite's tma runs.
  const build = spawnSync('npm', ['run', 'build'], { encoding: 'utf8', timeout: 10 * 60_000 });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
  const lines = [];
  for (const name of names) {
    const pinned = AGENTS[name].versions.join(', ');
    const newest = newestOnNpm(AGENTS[name].pkg);
    if (newest.error) {
      lines.push(`${name.padEnd(9)} pinned ${pinned}; newest unknown (${newest.error})`);
      continue;
    }
    try {
      installAgents([`${name}@${newest.version}`]);
    } catch (e) {
      lines.push(`${name.padEnd(9)} pinned ${pinned}; newest ${newest.version}: install failed (${e.message})`);
      continue;
    }
    const r = runSuite(name, newest.version);
    process.stdout.write(`\n${r.table}\n`);
    const isPinned = AGENTS[name].versions.includes(newest.version) ? ' (pinned)' : ' (not pinned yet)';
    lines.push(`${name.padEnd(9)} pinned ${pinned}; newest ${newest.version}${isPinned}: ${r.passed ? 'PASSES' : 'FAILS'} the suite`);
  }
  console.log(`\nnewest agents on npm against the suite:\n${lines.join('\n')}`);
  return lines.every((l) => l.includes('PASSES')) ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.exit(main(process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(AGENTS)));
  } catch (e) {
    console.error(`agents-newest: ${e.message}`);
    process.exit(2);
  }
}
