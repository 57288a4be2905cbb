// tma pi bridge — written by `tma install-hooks pi`; `tma install-hooks pi --uninstall` removes it.
// It passes pi's agent lifecycle to tma-hook so tma can tell working from waiting-for-you, and
// reports context use when a turn settles. Edits are overwritten on the next install.
import { spawn } from 'node:child_process';

const HOOK = '@@TMA_HOOK@@';
// A run's start and end: pi 0.73 ends a run with agent_end and has no agent_settled; pi 1.x sends
// agent_settled once it will not go on by itself. A retry or a compaction after agent_end starts a
// run of its own with agent_start (no new prompt), which claims working again.
const EVENTS = ['session_start', 'before_agent_start', 'agent_start', 'tool_execution_start', 'agent_end', 'agent_settled', 'session_shutdown'];
const RUN_ENDS = ['agent_end', 'agent_settled'];

// A hook that hangs must not hold back the events behind it for ever.
const HOOK_TIMEOUT_MS = 5000;

// One hook process at a time, in the order pi sent the events, so a turn's end never lands before
// its start. stdin carries the payload; errors never reach pi.
let queue = Promise.resolve();
function forward(kind, payload) {
  queue = queue.then(() => runHook(kind, payload));
}

function runHook(kind, payload) {
  return new Promise((resolve) => {
    let timer;
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      const child = spawn(HOOK, ['pi', kind], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
      // Held until it ends, so the agent quitting does not drop the events still queued; one
      // that hangs is let go after the timeout and the queue moves on.
      timer = setTimeout(() => {
        child.unref();
        done();
      }, HOOK_TIMEOUT_MS);
      timer.unref?.();
      child.on('error', done);
      child.on('close', done);
      child.stdin.on('error', () => {});
      child.stdin.end(JSON.stringify(payload));
    } catch {
      done(); // the hook is best effort
    }
  });
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
      if (RUN_ENDS.includes(name)) forward('context', { session_id, context_usage: contextUsage(ctx) });
    });
  }
}
