// Tear-down shared by the benches that run a scratch tmux server: the server, its socket file
// (tmux 3.3a leaves it behind) and the bench's temporary folder.

import { rmSync } from 'node:fs';
import { join } from 'node:path';

export function removeScratch(tmux: (...a: string[]) => string, name: string, dir: string): void {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  rmSync(join(process.env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid?.() ?? 0}`, name), { force: true });
  rmSync(dir, { recursive: true, force: true });
}
