// Facts about the tmux server itself, read once per engine: its socket path (the `server` key of
// every row) and its incarnation (pid + start time), since pane ids restart with a new server.

import { KEY } from '../core/store-codec.js';
import type { TmuxRunner } from '../tmux/runner.js';

export interface ServerInfo {
  socketPath: string;
  pid: number;
  startTime: number;
  /** Changes whenever the server behind the socket is a new one. */
  incarnation: string;
  /** The cached answer of the `set-option -F` probe (@tma_setpf_ok), when one is stored. */
  setpfOk: boolean | null;
}

/**
 * The one read of the facts (also chained into the first listing, settled-read.ts). A format
 * finds a user option in the server's options first, so the probe's cached answer comes along
 * and a one-shot cycle that has to write spends no tmux client on reading it.
 */
export const SERVER_FACTS_QUERY: readonly string[] = ['display-message', '-p', `#{socket_path}\u001f#{pid}\u001f#{start_time}\u001f#{${KEY.setpfOk}}`];

/** The probe's answer as stored in @tma_setpf_ok ('1' or '0'), or null when none is stored. */
export function storedSetpf(text: string): boolean | null {
  const v = text.trim();
  return v === '1' ? true : v === '0' ? false : null;
}

/** The facts from the query's output. */
export function parseServerFacts(output: string): ServerInfo {
  const [socketPath = '', pid = '0', start = '0', setpf = ''] = output.trim().split('\u001f');
  return { socketPath, pid: Number(pid) || 0, startTime: Number(start) || 0, incarnation: `${pid}-${start}`, setpfOk: storedSetpf(setpf) };
}

export class ServerFacts {
  private cached: ServerInfo | null = null;

  constructor(private readonly runner: TmuxRunner) {}

  async get(): Promise<ServerInfo> {
    if (this.cached) return this.cached;
    return this.prime(await this.runner.run(this.query()));
  }

  /** The facts if they were read already, without reading them. */
  peek(): ServerInfo | null {
    return this.cached;
  }

  /** The facts are not read yet: a caller may chain `query()` into its own tmux call and `prime()`. */
  get known(): boolean {
    return this.cached !== null;
  }

  query(): string[] {
    return [...SERVER_FACTS_QUERY];
  }

  prime(output: string): ServerInfo {
    return (this.cached = parseServerFacts(output));
  }

  forget(): void {
    this.cached = null;
  }
}
