// Before any real agent starts: the pinned CLIs installed (or found in the cache).

import { installAgents } from '../../tools/agents-install.mjs';

export default function setup(): void {
  const r = installAgents();
  process.stdout.write(`\n${r.text}\n`);
  process.env.TMA_AGENTS_INSTALL = r.text;
}
