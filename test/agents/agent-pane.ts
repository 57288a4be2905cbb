// One real agent in one real tmux pane: its own temp HOME/XDG dirs, its own fake model server,
// a session of the requested size on a scratch tmux server, the agent started by typing its name
// at the shell prompt and the prompt typed with send-keys, as a person would.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { agentBin } from '../../tools/agents-versions.mjs';
import { tma, waitFor, type CliResult } from '../support/scratch-tmux.js';
import type { AgentTmux } from './agent-tmux.js';
import { homeEnv, setUpAgent, type AgentName, type AgentSetup } from './agents.js';
import { reap } from './reap.js';
import { startFakeModels, type FakeModels, type Step } from './fake-models.js';

export interface PaneOptions {
  agent: AgentName;
  /** Which installed version runs (default: the agent's first pinned one). */
  version?: string;
  rows: number;
  cols?: number;
  hooks: boolean;
  /** The shell commands the model asks to run, in order (default: one append to `ran.txt`). */
  commands?: (project: string, home: string) => Step[];
  /** What is typed at the shell to start the agent (default: its name). */
  launch?: (name: string) => string;
  /** How long each model answer stays unfinished. */
  holdMs?: number;
  /** false: a 256-colour terminal (COLORTERM unset), as many people's are. Default true. */
  truecolor?: boolean;
  /** Leave the agent's start-up dialogs up for the test to read and answer (default: answered). */
  keepDialogs?: boolean;
  /** Claude Code after 2.1.197: start in the release's auto mode (see agents.ts). */
  autoMode?: boolean;
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
    readonly tmux: AgentTmux,
    readonly opts: PaneOptions,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), `tma-agent-${opts.agent}-`));
    this.home = join(this.dir, 'home');
    this.project = join(this.dir, 'project');
    mkdirSync(this.home, { recursive: true });
    mkdirSync(this.project, { recursive: true });
    this.ranFile = join(this.project, 'ran.txt');
  }

  /** What a tma call made for this pane's person carries: their HOME, the server's socket dir. */
  get env(): Record<string, string> {
    return { ...homeEnv(this.home), ...this.tmux.env };
  }

  /** Server, config, hooks, pane; the agent started and its input ready. */
  async start(): Promise<void> {
    const o = this.opts;
    const commands = o.commands?.(this.project, this.home) ?? [`echo ran >> ${this.ranFile}`];
    // Each answer is held 8 s: a reading begun 1 s after the approve must still find the agent
    // working, and on a loaded machine a one-shot `tma ls` has taken 6 s to answer (three cells'
    // readers at once on two shared cores); held 4 s, the turn had ended before it looked.
    this.fake = await startFakeModels({ commands, holdMs: o.holdMs ?? 8000, extraArgs: setUpAgentArgs(o.agent) });
    this.setup = setUpAgent(o.agent, { home: this.home, project: this.project, url: this.fake.url, version: o.version, autoMode: o.autoMode });
    if (o.hooks) {
      const r = await tma(['-L', this.tmux.name, 'install-hooks', o.agent, '--yes'], { env: this.env, timeoutMs: 30_000 });
      this.hooksOutput = r.stdout + r.stderr;
      if (r.code !== 0) throw new Error(`install-hooks ${o.agent} failed (${r.code}): ${r.stderr}${r.stdout}`);
    }
    this.session = `${o.agent}-${o.hooks ? 'h' : 'n'}-${o.rows}-${seq++}`;
    const env = {
      ...homeEnv(this.home),
      ...this.setup.env,
      PATH: `${dirname(agentBin(o.agent, o.version))}:${process.env.PATH ?? ''}`,
      TERM: 'xterm-256color',
      ...(o.truecolor === false ? {} : { COLORTERM: 'truecolor' }),
      LANG: 'C.UTF-8',
    };
    // Through env(1), not new-session -e: tmux 3.3a gives a new session the client's PATH. A CI
    // run's markers (CI=true, CI_*) are taken out: an agent started by a person has none, and
    // Gemini CLI, seeing one, will not start its interactive screen.
    const unsets = Object.keys(process.env)
      .filter((k) => k === 'CI' || k === 'CONTINUOUS_INTEGRATION' || k.startsWith('CI_') || (k === 'COLORTERM' && o.truecolor === false))
      .map((k) => `-u ${k}`);
    const assigns = [...unsets, ...Object.entries(env).map(([k, v]) => `${k}=${shq(v)}`)].join(' ');
    this.tmux.tmux(
      'new-session',
      '-d',
      '-s',
      this.session,
      '-x',
      String(o.cols ?? 120),
      '-y',
      String(o.rows),
      '-c',
      this.project,
      `env ${assigns} bash --rcfile ${join(this.tmux.dir, 'rc')} --noprofile -i`,
    );
    this.pane = this.tmux.tmux('display-message', '-p', '-t', this.session, '#{pane_id}').trim();
    await waitFor(() => this.screen().includes('$'), `the shell prompt in ${this.pane}`);
    const typed = o.launch ? o.launch(this.setup.name) : this.setup.name;
    this.type(typed);
    this.tmux.tmux('send-keys', '-t', this.pane, 'Enter');
    // Ready: its input box shows and the screen has held still for a second (Gemini paints its
    // box before it listens; an Enter typed then is lost).
    let last = '';
    let still = Date.now();
    await waitFor(
      () => {
        const s = this.screen();
        // A dialog can paint before it reads keys (Codex's hook review, on a loaded machine): one
        // still showing 3 s after its answer is answered again, at most three times.
        const due = (d: { shown: RegExp }) => {
          const sent = this.sentAt.get(d.shown.source);
          // A dialog tma answered is not answered again (tma would refuse it: answered once).
          if ('act' in d && this.dialogActs.some((a) => a.endsWith(':sent'))) return false;
          return sent === undefined || (Date.now() - sent.at >= 3000 && sent.times < 3);
        };
        const shown = o.keepDialogs ? undefined : this.setup.dialogs?.find((d) => d.shown.test(s));
        const dialog = shown !== undefined && this.acting === null && due(shown) ? shown : undefined;
        if (dialog) {
          const sent = this.sentAt.get(dialog.shown.source);
          if (!sent) this.answered.push(dialog.shown.source);
          this.sentAt.set(dialog.shown.source, { at: Date.now(), times: (sent?.times ?? 0) + 1 });
          if ('keys' in dialog) for (const k of dialog.keys) this.tmux.tmux('send-keys', '-t', this.pane, k);
          else this.acting = this.actOnDialog(dialog.act);
        }
        if (s !== last) {
          last = s;
          still = Date.now();
        }
        // Not ready while a dialog is up or tma is still answering one: its screen holds still too.
        return this.setup.readyShown.test(s) && Date.now() - still >= 1000 && shown === undefined && this.acting === null;
      },
      `${o.agent} ready in ${this.pane}`,
      90_000,
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n--- screen ---\n${this.screen()}\n--- requests ---\n${this.fake.requests.join('\n')}`);
    });
  }

  /** Type text as a person would: the characters, then (separately) Enter. */
  type(text: string): void {
    this.tmux.tmux('send-keys', '-t', this.pane, '-l', text);
  }

  /** Start-up dialogs answered (their patterns), for the report. */
  answered: string[] = [];
  /** Start-up dialogs answered through `tma act`: the action and its outcome (`sent`, `refused/answered`, …). */
  dialogActs: string[] = [];
  /** A `tma act` answering a start-up dialog, while it runs. */
  private acting: Promise<void> | null = null;

  private async actOnDialog(act: 'approve' | 'deny'): Promise<void> {
    const r = await this.run(['act', act, '--pane', this.pane, '--json']);
    let outcome = `exit ${r.code}`;
    try {
      const doc = JSON.parse(r.stdout) as { outcome?: string; reason?: string | null };
      outcome = `${doc.outcome ?? outcome}${doc.reason ? `/${doc.reason}` : ''}`;
    } catch {
      // not JSON: keep the exit code
    }
    this.dialogActs.push(`${act}:${outcome}`);
    this.acting = null;
  }
  /** When each start-up dialog was last answered, and how often. */
  private readonly sentAt = new Map<string, { at: number; times: number }>();
  /** Enters pressed again because the first one did not submit the prompt. */
  enterAgain = 0;

  /** Type a prompt key by key at a person's pace, then Enter. Codex and Gemini take a fast burst
   * of characters for a paste and an Enter right after it for a newline inside that paste. */
  async submit(text: string): Promise<void> {
    for (const ch of text) {
      this.type(ch);
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, 500));
    const asked = this.fake.requests.length;
    this.tmux.tmux('send-keys', '-t', this.pane, 'Enter');
    // Codex sometimes takes that Enter as part of the typed text: a person presses it again when
    // nothing happened — no request at all reached the model (counted, and shown in the table).
    for (let i = 0; i < 2; i++) {
      const end = Date.now() + 4000;
      while (Date.now() < end && this.fake.requests.length === asked) await new Promise((r) => setTimeout(r, 100));
      if (this.fake.requests.length > asked || !this.screen().includes(text)) return;
      this.enterAgain++;
      this.tmux.tmux('send-keys', '-t', this.pane, 'Enter');
    }
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

// Codex asks only for a command that wants out of its sandbox.
function setUpAgentArgs(agent: AgentName): Record<string, unknown> | undefined {
  return agent === 'codex' ? { sandbox_permissions: 'require_escalated' } : undefined;
}
