// Numbered failures of issue 21 that need a run of their own (the others are read off the matrix,
// see matrix.test.ts): a hook claim beside a painted prompt (2), OpenCode's two prompts in a row
// (5), an agent started through a wrapper (8); Gemini's shell-mode composer; OpenCode's cursor
// moved off "Allow once". Each asserts what a person expects, on the agent. (Claude Code 2.1.332's
// auto-mode offer moved to claude-dialogs.test.ts, where tma now answers it.)
// TMA_AGENTS_ONLY=opencode runs only the cases of those agents (see agents.ts `selected`).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentPane, type PaneOptions } from './agent-pane.js';
import { AgentTmux } from './agent-tmux.js';
import { selected } from './agents.js';
import { freePort } from '../support/ports.js';
import { approve, lsLook, PROMPT, untilState, waitForScreen, type Look, answered } from './scenario.js';

const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

interface Run {
  pane: AgentPane;
  idle?: Look;
  /** Readings begun 0.5, 1.0, 1.5 and 2.0 s after the prompt painted. */
  readings: Look[];
  approves: { outcome: string; reason: string | null; raw: string }[];
  prompts: (string | null)[];
  error?: string;
}

let server: AgentTmux | null = null;
const runs = new Map<string, Run>();

async function drive(key: string, opts: PaneOptions, prompts: RegExp[]): Promise<void> {
  if (!selected(opts.agent)) return;
  const pane = new AgentPane(server!, opts);
  const run: Run = { pane, readings: [], approves: [], prompts: [] };
  runs.set(key, run);
  try {
    await pane.start();
    run.idle = await lsLook(pane);
    await pane.submit(PROMPT);
    for (const shown of prompts) {
      const painted = await waitForScreen(pane, shown, 45_000);
      if (painted === null) throw new Error(`prompt ${shown} never painted:\n${pane.screen()}`);
      for (const dt of [500, 1000, 1500, 2000]) {
        await sleepUntil(painted + dt);
        run.readings.push(await lsLook(pane));
      }
      run.prompts.push(run.readings[run.readings.length - 1]!.prompt_id);
      run.approves.push(await approve(pane, 'local'));
      // The screen moves past this prompt before the next one is looked for.
      await waitForScreen(pane, new RegExp(`^(?![\\s\\S]*${shown.source})`), 10_000);
    }
    await untilState(() => lsLook(pane), 'idle', 15_000);
  } catch (e) {
    run.error = (e as Error).message.slice(0, 2000);
  }
}

/**
 * Gemini CLI's shell mode: `!` typed at an empty composer turns ` > ` into ` ! `; still idle. In a
 * 256-colour terminal, where Gemini paints no ▀ edge under its box, only the composer row says so.
 */
interface ShellMode {
  pane: AgentPane;
  idle?: Look;
  shell?: Look;
  draft?: Look;
  /** While the shell command runs. */
  running?: Look;
  /** After the shell command ran, back at the composer. */
  after?: Look;
  screens: string[];
  error?: string;
}
let shellMode: ShellMode | null = null;

async function driveShellMode(): Promise<void> {
  if (!selected('gemini')) return;
  const pane = new AgentPane(server!, { agent: 'gemini', rows: 40, hooks: false, truecolor: false });
  shellMode = { pane, screens: [] };
  try {
    await pane.start();
    shellMode.idle = await lsLook(pane);
    pane.type('!');
    if ((await waitForScreen(pane, /shell mode/i, 10_000)) === null) throw new Error(`shell mode never showed:\n${pane.screen()}`);
    await new Promise((r) => setTimeout(r, 1000));
    shellMode.screens.push(pane.screen());
    shellMode.shell = await lsLook(pane);
    // A command typed but not yet run is a draft: the person is still at the composer.
    pane.type('sleep 3');
    await new Promise((r) => setTimeout(r, 1000));
    shellMode.screens.push(pane.screen());
    shellMode.draft = await lsLook(pane);
    // Run it: working while it runs, then back at the ` ! ` composer, still in shell mode.
    pane.tmux.tmux('send-keys', '-t', pane.pane, 'Enter');
    await new Promise((r) => setTimeout(r, 1200));
    shellMode.screens.push(pane.screen());
    shellMode.running = await lsLook(pane);
    if ((await waitForScreen(pane, /✓ +Shell Command sleep 3/, 15_000)) === null) throw new Error(`sleep 3 never finished:\n${pane.screen()}`);
    await new Promise((r) => setTimeout(r, 1500));
    shellMode.screens.push(pane.screen());
    shellMode.after = await untilState(() => lsLook(pane), 'idle', 5000);
  } catch (e) {
    shellMode.error = (e as Error).message.slice(0, 2000);
  }
}

/**
 * OpenCode without the tma plugin is answered with Enter, which takes whichever option is
 * highlighted: the person moved it to "Allow always", so approve must not press it; moved back, it may.
 */
interface Cursor {
  pane: AgentPane;
  moved?: { outcome: string; raw: string; toolResults: number };
  back?: { outcome: string; raw: string };
  error?: string;
}
let cursor: Cursor | null = null;

async function driveCursor(): Promise<void> {
  if (!selected('opencode')) return;
  const pane = new AgentPane(server!, { agent: 'opencode', rows: 40, hooks: false });
  cursor = { pane };
  try {
    await pane.start();
    await pane.submit(PROMPT);
    const painted = await waitForScreen(pane, /Allow once/, 45_000);
    if (painted === null) throw new Error(`the prompt never painted:\n${pane.screen()}`);
    await sleepUntil(painted + 1000);
    pane.tmux.tmux('send-keys', '-t', pane.pane, 'Right');
    await new Promise((r) => setTimeout(r, 1000));
    const a = await approve(pane, 'local');
    await new Promise((r) => setTimeout(r, 1500));
    cursor.moved = { outcome: a.outcome, raw: a.raw, toolResults: pane.fake.toolResults.length };
    pane.tmux.tmux('send-keys', '-t', pane.pane, 'Left');
    await new Promise((r) => setTimeout(r, 1000));
    const b = await approve(pane, 'local');
    cursor.back = { outcome: b.outcome, raw: b.raw };
    await untilState(() => lsLook(pane), 'idle', 20_000);
  } catch (e) {
    cursor.error = (e as Error).message.slice(0, 2000);
  }
}

beforeAll(async () => {
  const port = await freePort();
  server = new AgentTmux('ag-focus');
  server.start();
  await Promise.all([
    driveShellMode(),
    driveCursor(),
    drive('hook-claude', { agent: 'claude', rows: 40, hooks: true }, [/Do you want to proceed\?/]),
    drive('wrapper', { agent: 'claude', rows: 40, hooks: false, launch: (name) => `bash -c '${name}; exec bash'` }, [/Do you want to proceed\?/]),
    drive(
      'opencode-two',
      {
        agent: 'opencode',
        rows: 40,
        hooks: true,
        // With --port, so its API answers (item 4 is the case without): this case is about item 5.
        launch: (name) => `${name} --port ${port}`,
        // First a file outside the project (OpenCode asks for the directory), then the command.
        commands: (project, home) => {
          const outside = join(home, 'outside');
          mkdirSync(outside, { recursive: true });
          writeFileSync(join(outside, 'notes.txt'), 'notes\n');
          return [{ name: 'read', args: { filePath: join(outside, 'notes.txt') } }, `echo ran >> ${join(project, 'ran.txt')}`];
        },
      },
      [/Access external directory|external_directory/, /# Shell command|\$ echo ran/],
    ),
  ]);
}, 300_000);

afterAll(async () => {
  await Promise.all([...[...runs.values()].map((r) => r.pane.close()), shellMode?.pane.close(), cursor?.pane.close()]);
  server?.kill();
}, 60_000);

describe('issue 21, on the real agents', () => {
  it.skipIf(!selected('claude'))("2: a hook claim never hides Claude's painted prompt (blocked 0.5–2 s after it paints, approve not gated)", () => {
    const r = runs.get('hook-claude')!;
    expect.soft(r.error).toBeUndefined();
    expect.soft(r.readings.map((l) => l.state)).toEqual(['blocked', 'blocked', 'blocked', 'blocked']);
    expect.soft(answered(r.approves[0]?.outcome), r.approves[0]?.raw).toBe(true);
    expect.soft(r.pane.fake.toolResults.length).toBe(1);
  });

  it.skipIf(!selected('opencode'))("5: OpenCode's two prompts in a row are two prompt_ids, each shown, each answered once", () => {
    const r = runs.get('opencode-two')!;
    expect.soft(r.error).toBeUndefined();
    expect.soft(r.readings.map((l) => l.state)).toEqual(Array(8).fill('blocked'));
    const [p1, p2] = r.prompts;
    expect.soft(p1, 'the first prompt has an id while it shows').not.toBeNull();
    expect.soft(p2, 'the second prompt has an id').not.toBeNull();
    expect.soft(p2, 'the second prompt is not the first one').not.toBe(p1);
    expect
      .soft(
        r.approves.map((a) => answered(a.outcome)),
        JSON.stringify(r.approves),
      )
      .toEqual([true, true]);
    expect.soft(r.pane.fake.toolResults.length, 'both tool calls answered, once each').toBe(2);
    expect.soft(r.pane.ranCount(), 'the command ran once').toBe(1);
  });

  it.skipIf(!selected('gemini'))("Gemini's shell-mode composer (` ! ` instead of ` > `) reads idle, empty or with a draft", () => {
    const r = shellMode!;
    expect.soft(r.error).toBeUndefined();
    expect.soft(r.idle?.state, 'idle before shell mode').toBe('idle');
    expect.soft(r.shell?.state, 'idle in shell mode').toBe('idle');
    expect.soft(r.draft?.state, 'idle with a shell command typed').toBe('idle');
    expect.soft(r.running?.state, 'working while the shell command runs').toBe('working');
    expect.soft(r.after?.state, 'idle once the shell command ran and the composer is back').toBe('idle');
  });

  it.skipIf(!selected('opencode'))('approve never presses Enter on an OpenCode option the person moved the cursor to', () => {
    const r = cursor!;
    expect.soft(r.error).toBeUndefined();
    expect.soft(r.moved?.outcome, `cursor on "Allow always": ${r.moved?.raw}`).toBe('refused');
    expect.soft(r.moved?.toolResults, 'nothing answered while the cursor was elsewhere').toBe(0);
    expect.soft(answered(r.back?.outcome), `cursor back on "Allow once": ${r.back?.raw}`).toBe(true);
    expect.soft(r.pane.fake.toolResults.length, 'answered once').toBe(1);
    expect.soft(r.pane.ranCount(), 'the command ran once').toBe(1);
  });

  it.skipIf(!selected('claude'))("8: Claude started through a wrapper (bash -c 'claude; exec bash') is seen and answered", () => {
    const r = runs.get('wrapper')!;
    expect.soft(r.error).toBeUndefined();
    expect.soft(r.idle?.state, 'idle before the prompt').toBe('idle');
    expect.soft(r.readings[0]?.state, 'blocked 0.5 s after the prompt painted').toBe('blocked');
    expect.soft(answered(r.approves[0]?.outcome), r.approves[0]?.raw).toBe(true);
    expect.soft(r.pane.ranCount()).toBe(1);
  });
});
