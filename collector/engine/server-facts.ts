// Facts about the tmux server itself, read once per engine: its socket path (the `server` key of
// every row) and its incarnation (pid + start time), since pane ids restart with a new server.

import type { TmuxRunner } from '../tmux/runner.js';

export interface ServerInfo {
  socketPath: string;
  pid: number;
  startTime: number;
  /** Changes whenever the server behind the socket is a new one. */
  incarnation: string;
}

export class ServerFacts {
  private cached: ServerInfo | null = null;

  constructor(private readonly runner: TmuxRunner) {}

  async get(): Promise<ServerInfo> {
    if (this.cached) return this.cached;
    return this.prime(await this.runner.run(this.query()));
  }

  /** The facts are not read yet: a caller may chain `query()` into its own tmux call and `prime()`. */
  get known(): boolean {
    return this.cached !== null;
  }

  query(): string[] {
    return ['display-message', '-p', '#{socket_path}\u001f#{pid}\u001f#{start_time}'];
  }

  prime(output: string): ServerInfo {
    const [socketPath = '', pid = '0', start = '0'] = output.trim().split('\u001f');
    this.cached = { socketPath, pid: Number(pid) || 0, startTime: Number(start) || 0, incarnation: `${pid}-${start}` };
    return this.cached;
  }

  forget(): void {
    this.cached = null;
  }
}
