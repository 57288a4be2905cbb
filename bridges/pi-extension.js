// tma pi bridge — written by `tma install-hooks pi`; `tma install-hooks pi --uninstall` removes it.
// It passes pi's agent lifecycle to tma-hook so tma can tell working from waiting-for-you, and
// reports context use when a turn settles. Edits are overwritten on the next install.
import { spawn } from 'node:child_process';

const HOOK = "@@TMA_HOOK@@";
const EVENTS = ['session_start', 'before_agent_start', 'tool_execution_start', 'agent_settled', 'session_shutdown'];

// Fire and forget: stdin carries the payload; errors never reach pi.
function forward(kind, payload) {
  try {
    const child = spawn(HOOK, ['pi', kind], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', () => {});
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(payload));
    child.unref();
  } catch {
    // the hook is best effort
  }
}

function sessionId(ctx) {
  try {
    const id = ctx?.sessionManager?.getSessionId?.();
    return typeof id === 'string' ? id : '';
  } catch {
    return '';
  }
}

function contextUsage(ctx) {
  try {
    return ctx?.getContextUsage?.() ?? null;
  } catch {
    return null;
  }
}

export default function tmaBridge(pi) {
  // Outside tmux there is no pane to report on.
  if (!process.env.TMUX_PANE) return;
  for (const name of EVENTS) {
    pi.on(name, async (_event, ctx) => {
      const session_id = sessionId(ctx);
      forward(name, { session_id });
      if (name === 'agent_settled') forward('context', { session_id, context_usage: contextUsage(ctx) });
    });
  }
}
