// tma OpenCode bridge — written by `tma install-hooks opencode`; `tma install-hooks opencode
// --uninstall` removes it. It turns OpenCode's plugin events into tma-hook calls so tma knows when
// this session is working, waiting for you, or done, and lets `tma act approve|deny` answer a
// permission request. Edits are overwritten on the next install.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

const HOOK = '@@TMA_HOOK@@';
// A hook that hangs must not hold back the events behind it for ever.
const HOOK_TIMEOUT_MS = 5000;
let announced = false;

// One hook process at a time, in the order OpenCode sent the events: a `replied` for one request
// must never land after the `asked` of the next. Nothing comes back and no failure reaches OpenCode.
let queue = Promise.resolve();
function forward(token, payload) {
  queue = queue.then(() => runHook(token, payload));
}

function runHook(token, payload) {
  return new Promise((resolve) => {
    let timer;
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      const child = spawn(HOOK, ['opencode', token], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
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

const sessionOf = (o) => (o && typeof o.sessionID === 'string' ? o.sessionID : '');
const requestOf = (o) => (typeof o.requestID === 'string' ? o.requestID : typeof o.id === 'string' ? o.id : '');

// The reply endpoint. A plainly started OpenCode listens on no port (the `serverUrl` it hands
// plugins names one nobody serves; its `client` talks to the server in-process), so the bridge
// serves the one route `tma act` needs, on loopback, behind a random path only the pane's own
// options know, and answers through that in-process client. Each request is answered at most
// once: a second reply for it is told the request is gone, without reaching OpenCode. It also
// serves the pending list (`GET …/permission`), which `tma act` reads before and after a reply to
// see that the answer landed: OpenCode's own list when its client offers one, else the requests
// this bridge saw asked and not yet replied.
function replyServer(client, sessions) {
  const secret = randomBytes(16).toString('hex');
  const answered = new Set();
  const route = new RegExp(`^/${secret}/permission/([^/]+)/reply$`);
  const list = `/${secret}/permission`;
  const server = createServer((req, res) => {
    const end = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === list) {
      void pendingList(client, sessions).then((ids) =>
        end(
          200,
          ids.map((id) => ({ id })),
        ),
      );
      return;
    }
    const m = route.exec(req.url ?? '');
    if (req.method !== 'POST' || m === null) return end(404, { error: 'not found' });
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      if (raw.length < 4096) raw += c;
    });
    req.on('end', async () => {
      let requestID;
      let reply;
      try {
        requestID = decodeURIComponent(m[1]);
        reply = JSON.parse(raw).reply;
      } catch {
        return end(400, { error: 'bad request' });
      }
      if (reply !== 'once' && reply !== 'always' && reply !== 'reject') return end(400, { error: 'bad reply' });
      const sessionID = sessions.get(requestID);
      if (sessionID === undefined || answered.has(requestID)) return end(404, { error: 'request gone' });
      answered.add(requestID);
      sessions.delete(requestID);
      end(...(await answer(client, sessionID, requestID, reply)));
    });
  });
  return new Promise((resolve) => {
    server.on('error', () => resolve(''));
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolve(`http://127.0.0.1:${server.address().port}/${secret}`);
    });
  });
}

async function pendingList(client, sessions) {
  try {
    if (typeof client?.permission?.list === 'function') {
      const r = await client.permission.list();
      const data = Array.isArray(r) ? r : r?.data;
      if (Array.isArray(data)) return data.map(requestOf).filter((id) => id !== '');
    }
  } catch {
    // OpenCode's list is out of reach: what this bridge saw is the next best account.
  }
  return [...sessions.keys()];
}

async function answer(client, sessionID, requestID, reply) {
  try {
    const r =
      typeof client?.postSessionIdPermissionsPermissionId === 'function'
        ? await client.postSessionIdPermissionsPermissionId({ path: { id: sessionID, permissionID: requestID }, body: { response: reply } })
        : await client.permission.reply({ requestID, reply });
    const status = r?.response?.status ?? (r?.error ? 500 : 200);
    if (status >= 200 && status < 300) return [200, { replied: true }];
    return [status === 404 ? 404 : 502, { error: `OpenCode answered HTTP ${status}` }];
  } catch (e) {
    return [502, { error: `OpenCode refused the reply: ${e?.message ?? e}` }];
  }
}

export const TmaBridge = async (input) => {
  // Which session asked each open request: the in-process reply route needs it.
  const sessions = new Map();
  // A host that hands no client (an older OpenCode) is left to answer on the URL it named.
  const named = typeof input?.serverUrl === 'string' || input?.serverUrl instanceof URL ? String(input.serverUrl).replace(/\/$/, '') : '';
  const endpoint = input?.client ? await replyServer(input.client, sessions) : named;
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
        case 'permission.updated': {
          const request_id = requestOf(props);
          if (request_id !== '') sessions.set(request_id, session_id);
          const permission = typeof props.permission === 'string' ? props.permission : typeof props.type === 'string' ? props.type : '';
          // What is asked, as the tool and the patterns it wants (the command for a shell call,
          // the directory for one outside the project), so the hook alone can say it.
          const patterns = Array.isArray(props.patterns) ? props.patterns.filter((p) => typeof p === 'string') : [];
          forward('permission-required', {
            session_id,
            permission,
            request_id,
            ...(permission !== '' && patterns.length ? { tool_name: permission, tool_input: { pattern: patterns } } : {}),
          });
          break;
        }
        case 'permission.replied': {
          // Names the request it answered, so it clears that request and never the next one.
          const request_id = requestOf(props);
          sessions.delete(request_id);
          forward('permission-replied', { session_id, request_id });
          break;
        }
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
