// One real agent in one real tmux pane: its own temp HOME/XDG dirs, its own fake model server,
// a session of the requested size on a scratch tmux server, the agent started by typing its name
// at the shell prompt and the prompt typed with send-keys, as a person would.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { agentBin } from '../../tools/agents-versions.mjs';
import { ScratchTmux, tma, waitFor, type CliResult } from '../support/scratch-tmux.js';
import { homeEnv, setUpAgent, type AgentName, type AgentSetup } from './agents.js';
import { reap } from './reap.js';
import { startFakeModels, type FakeModels } from './fake-models.js';

export interface PaneOptions {
  agent: AgentName;
  rows: number;
  cols?: number;
  hooks: boolean;
  /** The shell commands the model asks to run, in order (default: one append to `ran.txt`). */
  commands?: (project: string, home: string) => string[];
  /** What is typed at the shell to start the agent (default: its name). */
  launch?: (bin: string) => string;
  /** How long each model answer stays unfinished. */
  holdMs?: number;
}

let seq = 0;

export class AgentPane {
  readonly dir: string;
  readonly home: string;
  readonly project: string;
  readonly ranFile: string;
  pane = '';
  session = '';
  setup!: AgentSetup;
  fake!: FakeModels;
  hooksOutput = '';

  constructor(
    readonly tmux: ScratchTmux,
    readonly opts: PaneOptions,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), `tma-agent-${opts.agent}-`));
    this.home = join(this.dir, 'home');
    this.project = join(this.dir, 'project');
    mkdirSync(this.home, { recursive: true });
    mkdirSync(this.project, { recursive: true });
    this.ranFile = join(this.project, 'ran.txt');
  }

  get env(): Record<string, string> {
    return homeEnv(this.home);
  }

  /** Server, config, hooks, pane; the agent started and its input ready. */
  async start(): Promise<void> {
    const o = this.opts;
    const commands = o.commands?.(this.project, this.home) ?? [`echo ran >> ${this.ranFile}`];
    this.fake = await startFakeModels({ commands, holdMs: o.holdMs ?? 3000, extraArgs: setUpAgentArgs(o.agent) });
    this.setup = setUpAgent(o.agent, { home: this.home, project: this.project, url: this.fake.url });
    if (o.hooks) {
      const r = await tma(['-L', this.tmux.name, 'install-hooks', o.agent, '--yes'], { env: this.env, timeoutMs: 30_000 });
      this.hooksOutput = r.stdout + r.stderr;
      if (r.code !== 0) throw new Error(`install-hooks ${o.agent} failed (${r.code}): ${r.stderr}${r.stdout}`);
    }
    this.session = `${o.agent}-${o.hooks ? 'h' : 'n'}-${o.rows}-${seq++}`;
    const env = { ...this.env, ...this.setup.env, PATH: `${dirname(agentBin(o.agent))}:${process.env.PATH ?? ''}`, TERM: 'xterm-256color', COLORTERM: 'truecolor', LANG: 'C.UTF-8' };
    // Through env(1), not new-session -e: tmux 3.3a gives a new session the client's PATH.
    const assigns = Object.entries(env).map(([k, v]) => `${k}=${shq(v)}`).join(' ');
    this.tmux.tmux('new-session', '-d', '-s', this.session, '-x', String(o.cols ?? 120), '-y', String(o.rows), '-c', this.project, `env ${assigns} bash --rcfile ${join(this.tmux.dir, 'rc')} --noprofile -i`);
    this.pane = this.tmux.tmux('display-message', '-p', '-t', this.session, '#{pane_id}').trim();
    await waitFor(() => this.screen().includes('$'), `the shell prompt in ${this.pane}`);
    const typed = o.launch ? o.launch(this.setup.name) : this.setup.name;
    this.type(typed);
    this.tmux.tmux('send-keys', '-t', this.pane, 'Enter');
    await waitFor(() => this.setup.readyShown.test(this.screen()), `${o.agent} ready in ${this.pane}`, 60_000).catch((e: Error) => {
      throw new Error(`${e.message}\n--- screen ---\n${this.screen()}\n--- requests ---\n${this.fake.requests.join('\n')}`);
    });
  }

  /** Type text as a person would: the characters, then (separately) Enter. */
  type(text: string): void {
    this.tmux.tmux('send-keys', '-t', this.pane, '-l', text);
  }

  submit(text: string): void {
    this.type(text);
    // A beat between the text and Enter, as a person's hand gives: some TUIs treat a paste burst
    // ending in a newline as pasted text, not a submit.
    spawnSync('sleep', [process.env.PROBE_ENTER_DELAY ?? '0.3']);
    this.tmux.tmux('send-keys', '-t', this.pane, 'Enter');
  }

  screen(): string {
    try {
      return this.tmux.tmux('capture-pane', '-p', '-t', this.pane);
    } catch {
      return '';
    }
  }

  /** Lines the approved command appended: the agent's side effect, counted on disk. */
  ranCount(): number {
    return existsSync(this.ranFile) ? readFileSync(this.ranFile, 'utf8').split('\n').filter(Boolean).length : 0;
  }

  run(args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
    return tma(['-L', this.tmux.name, ...args], { env: { ...this.env, ...extraEnv }, timeoutMs: 20_000 });
  }

  /** End the agent and everything it started (the pane's shell included), then its files. */
  async close(): Promise<void> {
    this.left = await reap(this.home);
    await this.fake?.close();
    rmSync(this.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }

  /** Pids that were still running when close() began (the agent, its helpers). */
  left: number[] = [];
}

const shq = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

function setUpAgentArgs(agent: AgentName): Record<string, unknown> | undefined {
  return agent === 'codex' ? { sandbox_permissions: 'require_escalated' } : undefined;
}
