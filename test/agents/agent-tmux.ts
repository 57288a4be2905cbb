// A scratch tmux server in a socket folder of its own (TMUX_TMPDIR), so a collector started for
// it follows it and nothing else — not another group's server, not the user's.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScratchTmux } from '../support/scratch-tmux.js';

export class AgentTmux extends ScratchTmux {
  readonly socketDir = mkdtempSync(join(tmpdir(), 'tma-agents-sock-'));

  get env(): Record<string, string> {
    return { TMUX_TMPDIR: this.socketDir };
  }

  override tmux(...args: string[]): string {
    return execFileSync('tmux', ['-u', '-L', this.name, '-f', '/dev/null', ...args], {
      encoding: 'utf8',
      timeout: 5000,
      env: { ...process.env, TMUX: '', ...this.env },
    });
  }

  override socketPath(): string {
    return join(this.socketDir, `tmux-${process.getuid?.() ?? 0}`, this.name);
  }

  override kill(): void {
    const opts = { timeout: 5000, encoding: 'utf8' as const, env: { ...process.env, TMUX: '', ...this.env } };
    const pid = Number(spawnSync('tmux', ['-L', this.name, 'display-message', '-p', '#{pid}'], opts).stdout?.trim());
    spawnSync('tmux', ['-L', this.name, 'kill-server'], opts);
    if (Number.isInteger(pid) && pid > 0) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(this.socketDir, { recursive: true, force: true });
    rmSync(this.dir, { recursive: true, force: true });
  }
}
