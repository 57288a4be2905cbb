// tma OpenCode bridge — written by `tma install-hooks opencode`; `tma install-hooks opencode
// --uninstall` removes it. It turns OpenCode's plugin events into tma-hook calls so tma knows when
// this session is working, waiting for you, or done. Edits are overwritten on the next install.
import { spawn } from 'node:child_process';

const HOOK = "@@TMA_HOOK@@";
let announced = false;

// Fire and forget: the payload goes in on stdin, nothing comes back, and no failure reaches OpenCode.
function forward(token, payload) {
  try {
    const child = spawn(HOOK, ['opencode', token], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', () => {});
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(payload));
    child.unref();
  } catch {
    // the hook is best effort
  }
}

const sessionOf = (o) => (o && typeof o.sessionID === 'string' ? o.sessionID : '');

export const TmaBridge = async (input) => {
  const endpoint = typeof input?.serverUrl === 'string' || input?.serverUrl instanceof URL ? String(input.serverUrl).replace(/\/$/, '') : '';
  if (!announced) {
    announced = true;
    forward('session-start', { session_id: '', api_endpoint: endpoint });
  }
  return {
    event: async ({ event }) => {
      const props = event?.properties ?? {};
      const session_id = sessionOf(props) || sessionOf(props.info);
      switch (event?.type) {
        case 'session.created':
          forward('session-start', { session_id, api_endpoint: endpoint });
          break;
        case 'session.status': {
          const kind = props.status?.type;
          if (kind === 'busy') forward('user-prompt-submit', { session_id });
          else if (kind === 'idle') forward('stop', { session_id });
          break;
        }
        case 'session.idle':
          forward('stop', { session_id });
          break;
        case 'permission.asked':
        case 'permission.updated':
          forward('permission-required', {
            session_id,
            permission: typeof props.permission === 'string' ? props.permission : typeof props.type === 'string' ? props.type : '',
            request_id: typeof props.requestID === 'string' ? props.requestID : typeof props.id === 'string' ? props.id : '',
          });
          break;
        case 'permission.replied':
          forward('permission-replied', { session_id });
          break;
        default:
          break;
      }
    },
    'chat.message': async (hookInput) => {
      forward('user-prompt-submit', { session_id: sessionOf(hookInput) });
    },
    'tool.execute.before': async (hookInput) => {
      forward('user-prompt-submit', { session_id: sessionOf(hookInput) });
    },
  };
};
