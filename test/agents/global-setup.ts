// Before any real agent starts: the pinned CLIs installed (or found in the cache). After the
// last test: the one table of every cell, the install time and the suite's wall time.

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installAgents } from '../../tools/agents-install.mjs';
import { AGENTS } from '../../tools/agents-versions.mjs';
import { table } from './results.js';
import type { CellRecord } from './scenario.js';

export default function setup(): () => void {
  const started = Date.now();
  // Versions named for this run (tools/agents-newest.mjs) are installed beside the pinned ones.
  const named = (process.env.TMA_AGENTS_VERSIONS ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  const install = installAgents([...Object.keys(AGENTS), ...named]);
  process.stdout.write(`\n${install.text}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'tma-agents-results-'));
  process.env.TMA_AGENTS_RESULTS = join(dir, 'cells.jsonl');
  return () => {
    const path = process.env.TMA_AGENTS_RESULTS!;
    const cells = existsSync(path)
      ? readFileSync(path, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as CellRecord)
      : [];
    process.stdout.write(`\nreal agents: every cell (results = tool results the fake server received)\n${table(cells)}\n`);
    process.stdout.write(`\n${install.text}\nwall time ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    // TMA_AGENTS_KEEP=FILE keeps every cell's full record (errors, screens) for a closer look.
    if (process.env.TMA_AGENTS_KEEP) writeFileSync(process.env.TMA_AGENTS_KEEP, cells.map((c) => JSON.stringify(c)).join('\n'));
    rmSync(dir, { recursive: true, force: true });
  };
}
