// The environment an exec action runs with. The pane's facts reach the command only as
// variables, never spliced into its text: a title is whatever the agent chose to print.

import type { PaneFacts } from './facts.js';

export function execEnv(action: string, f: PaneFacts, args: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {
    TMA_PANE: f.pane,
    TMA_AGENT: f.agent ?? '',
    TMA_STATE: f.state ?? '',
    TMA_DETAIL: f.detail ?? '',
    TMA_SESSION_ID: f.session ?? '',
    TMA_CWD: f.cwd,
    TMA_PID: f.pid === 0 ? '' : String(f.pid),
    TMA_LOCATOR: f.locator,
    TMA_TITLE: f.title,
    TMA_ACTION: action,
  };
  if (args.length > 0) {
    env.TMA_ARG = args[0]!;
    env.TMA_ARG_COUNT = String(args.length);
    args.forEach((a, i) => (env[`TMA_ARG_${i + 1}`] = a));
  }
  return env;
}

/** The parent's environment minus any inherited TMA_ARG* (they must mean this call's args). */
export function baseEnv(parent: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parent)) if (v !== undefined && !k.startsWith('TMA_ARG')) out[k] = v;
  return out;
}
