// The project's own model server for the real-agent suite: one Node http server on 127.0.0.1
// (ephemeral port) speaking the four wire formats the agents use — Anthropic Messages, OpenAI
// Responses and Chat Completions, Gemini streamGenerateContent — each streamed as SSE.
//
// The script is the same for every format: a turn whose conversation holds no tool result yet is
// answered with one tool call that needs permission (a shell command), a turn that carries the
// result is answered with a short text. Each answer is held back a little before it completes so
// the agent is visibly working for a while. Every tool result that arrives is recorded, so a test
// can assert the approve made the agent proceed exactly once.

import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface ToolResult {
  /** The call id the server issued (or the tool's name where the format carries no id). */
  id: string;
  /** What the agent sent back as the command's output, shortened. */
  output: string;
  /** The agent marked it an error (Anthropic's `is_error`: a refused call); absent where the format has no such flag. */
  isError?: boolean;
}

/** One scripted tool call: a shell command, or a named tool with its arguments as they are sent. */
export type Step = string | { name: string; args: Record<string, unknown> };

export interface FakeModelOptions {
  /** The tool calls asked for, one per turn, in order (a script can ask twice in a row). */
  commands: Step[];
  /** How long an answer stays unfinished, so the agent shows its working screen. */
  holdMs?: number;
  /** Extra arguments for the tool call, per API (Codex's `sandbox_permissions`, …). */
  extraArgs?: Record<string, unknown>;
}

export interface FakeModels {
  url: string;
  port: number;
  /** Every tool result received, first sighting of each call id only, in arrival order. */
  toolResults: ToolResult[];
  /** Every sighting of a tool result, repeated ones included (a replayed request counts again). */
  toolResultSightings: number;
  /** Requests seen, `METHOD path` — for the failure message when an agent talks past us. */
  requests: string[];
  /** Tool calls issued so far. */
  callsIssued: number;
  /** Turns begun (requests that offered the shell tool): the agent is waiting on the model. */
  turns: number;
  /** When the first turn began (ms since the epoch), 0 before. */
  firstTurnAt: number;
  /** Closing texts sent in full (a turn that offered the tool and got text: the script is done). */
  closed: number;
  close(): Promise<void>;
}

type Sse = (event: string | null, data: unknown) => void;

export async function startFakeModels(opts: FakeModelOptions): Promise<FakeModels> {
  const hold = opts.holdMs ?? 2500;
  const issued = new Map<string, Step>(); // call id → what was asked
  const state: FakeModels = {
    url: '',
    port: 0,
    toolResults: [],
    toolResultSightings: 0,
    requests: [],
    callsIssued: 0,
    turns: 0,
    firstTurnAt: 0,
    closed: 0,
    close: async () => {},
  };
  const open = new Set<ServerResponse>();

  const nextCall = (): { id: string; command: string; step: Step } | null => {
    const step = opts.commands[state.callsIssued];
    if (step === undefined) return null;
    const command = typeof step === 'string' ? step : '';
    if (command === undefined) return null;
    state.callsIssued++;
    const id = `call_${state.callsIssued}_${Math.random().toString(36).slice(2, 8)}`;
    issued.set(id, step);
    return { id, command, step };
  };
  // A result for a call we issued (or, without ids, for the tool by name): record it once.
  const sawResult = (id: string, output: unknown, isError?: boolean): void => {
    state.toolResultSightings++;
    if (state.toolResults.some((r) => r.id === id)) return;
    const text = typeof output === 'string' ? output : JSON.stringify(output);
    state.toolResults.push({ id, output: (text ?? '').slice(0, 200), ...(isError === undefined ? {} : { isError }) });
  };
  // Decide the turn: the call to issue, or null for the closing text (counted in `closed` once
  // that answer has gone out in full).
  const decide = (hasTools: boolean, resultIds: string[], res?: ServerResponse): { id: string; command: string; step: Step } | null => {
    if (!hasTools) return null;
    if (state.turns++ === 0) state.firstTurnAt = Date.now();
    // Every call issued so far has its answer: ask the next one (if any) — else text.
    const answered = [...issued.keys()].every((id) => resultIds.includes(id));
    const call = answered ? nextCall() : null; // without the pending result (a side request): text
    if (!call && res) res.once('finish', () => state.closed++);
    return call;
  };

  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      state.requests.push(`${req.method} ${req.url}`);
      if (process.env.TMA_FAKE_MODELS_LOG) appendFileSync(process.env.TMA_FAKE_MODELS_LOG, `${req.method} ${req.url}\n${body}\n\n`);
      let json: Record<string, unknown> = {};
      try {
        json = body ? (JSON.parse(body) as Record<string, unknown>) : {};
      } catch {
        json = {};
      }
      route(req, res, json).catch((e: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: (e as Error).message } }));
      });
    });
  });

  const sseStart = (res: ServerResponse): Sse => {
    open.add(res);
    res.on('close', () => open.delete(res));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    return (event, data) => {
      if (res.destroyed) return;
      res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    };
  };
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const sendJson = (res: ServerResponse, status: number, doc: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(doc));
  };

  async function route(req: IncomingMessage, res: ServerResponse, json: Record<string, unknown>): Promise<void> {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (req.method === 'GET') {
      if (path.endsWith('/models')) {
        sendJson(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'tma' }], models: [] });
        return;
      }
      sendJson(res, 200, {});
      return;
    }
    if (path.endsWith('/messages/count_tokens')) {
      sendJson(res, 200, { input_tokens: 10 });
      return;
    }
    if (path.endsWith('/messages')) return anthropic(res, json);
    if (path.endsWith('/responses')) return responses(res, json);
    if (path.endsWith('/chat/completions')) return chat(res, json);
    if (path.includes(':countTokens')) {
      sendJson(res, 200, { totalTokens: 10 });
      return;
    }
    if (path.includes(':streamGenerateContent') || path.includes(':generateContent')) return gemini(res, json, path.includes(':stream'));
    sendJson(res, 404, { error: { message: `fake model server: no route ${path}` } });
  }

  const argsFor = (command: string) => ({ ...opts.extraArgs, command });

  // --- Anthropic Messages -------------------------------------------------------------------
  async function anthropic(res: ServerResponse, json: Record<string, unknown>): Promise<void> {
    const messages = (json.messages as { role: string; content: unknown }[] | undefined) ?? [];
    const ids: string[] = [];
    for (const m of messages) {
      if (m.role !== 'user' || !Array.isArray(m.content)) continue;
      for (const c of m.content as { type?: string; tool_use_id?: string; content?: unknown; is_error?: boolean }[]) {
        if (c.type === 'tool_result' && c.tool_use_id && issued.has(c.tool_use_id)) {
          ids.push(c.tool_use_id);
          sawResult(c.tool_use_id, c.content, c.is_error === true);
        }
      }
    }
    const tools = (json.tools as { name: string }[] | undefined) ?? [];
    const call = decide(
      tools.some((t) => t.name === 'Bash'),
      ids,
      res,
    );
    const message = {
      id: `msg_${Date.now()}`,
      type: 'message',
      role: 'assistant',
      model: String(json.model ?? 'fake'),
      content: [] as unknown[],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    };
    const blockFor = () =>
      call
        ? { type: 'tool_use', id: call.id, name: 'Bash', input: { command: call.command, description: 'Append a line to a file' } }
        : { type: 'text', text: 'Done: the command ran.' };
    if (json.stream !== true) {
      sendJson(res, 200, {
        ...message,
        content: [blockFor()],
        stop_reason: call ? 'tool_use' : 'end_turn',
        usage: { input_tokens: 10, output_tokens: 5 },
      });
      return;
    }
    const sse = sseStart(res);
    sse('message_start', { type: 'message_start', message });
    sse('ping', { type: 'ping' });
    await wait(hold);
    if (call) {
      sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: call.id, name: 'Bash', input: {} } });
      sse('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify({ command: call.command, description: 'Append a line to a file' }) },
      });
    } else {
      sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Done: the command ran.' } });
    }
    sse('content_block_stop', { type: 'content_block_stop', index: 0 });
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } });
    sse('message_stop', { type: 'message_stop' });
    res.end();
  }

  // --- OpenAI Responses -----------------------------------------------------------------------
  async function responses(res: ServerResponse, json: Record<string, unknown>): Promise<void> {
    const input = Array.isArray(json.input) ? (json.input as { type?: string; call_id?: string; output?: unknown }[]) : [];
    const ids: string[] = [];
    for (const it of input) {
      if ((it.type === 'function_call_output' || it.type === 'custom_tool_call_output') && it.call_id && issued.has(it.call_id)) {
        ids.push(it.call_id);
        sawResult(it.call_id, it.output);
      }
    }
    const tools = (json.tools as { name?: string; type?: string; parameters?: { properties?: Record<string, unknown> } }[] | undefined) ?? [];
    // Codex names its shell tool by version; take the one it offers and fill the argument it names.
    const shell = tools.find((t) => t.name === 'shell' || t.name === 'exec_command' || t.name === 'shell_command');
    const call = decide(shell !== undefined, ids, res);
    const rid = `resp_${Date.now()}`;
    const sse = sseStart(res);
    sse('response.created', { type: 'response.created', response: { id: rid, object: 'response', status: 'in_progress', output: [] } });
    await wait(hold);
    let item: Record<string, unknown>;
    if (call && shell) {
      const props = shell.parameters?.properties ?? {};
      const args: Record<string, unknown> = { ...opts.extraArgs };
      if ('cmd' in props) args.cmd = call.command;
      else if (shell.name === 'shell') args.command = ['bash', '-lc', call.command];
      else args.command = call.command;
      if ('justification' in props) args.justification = 'Append a line to a file';
      item = { type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: shell.name, arguments: JSON.stringify(args), status: 'completed' };
    } else {
      item = {
        type: 'message',
        id: `msg_${rid}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Done: the command ran.', annotations: [] }],
      };
      sse('response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, content: [] } });
      sse('response.output_text.delta', {
        type: 'response.output_text.delta',
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        delta: 'Done: the command ran.',
      });
    }
    sse('response.output_item.done', { type: 'response.output_item.done', output_index: 0, item });
    sse('response.completed', {
      type: 'response.completed',
      response: {
        id: rid,
        object: 'response',
        status: 'completed',
        output: [item],
        usage: {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 5,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 15,
        },
      },
    });
    res.end();
  }

  // --- OpenAI Chat Completions ----------------------------------------------------------------
  async function chat(res: ServerResponse, json: Record<string, unknown>): Promise<void> {
    const messages = (json.messages as { role: string; tool_call_id?: string; content?: unknown }[] | undefined) ?? [];
    const ids: string[] = [];
    for (const m of messages) {
      if (m.role === 'tool' && m.tool_call_id && issued.has(m.tool_call_id)) {
        ids.push(m.tool_call_id);
        sawResult(m.tool_call_id, m.content);
      }
    }
    const tools = (json.tools as { function?: { name?: string } }[] | undefined) ?? [];
    const bash = tools.find((t) => t.function?.name === 'bash');
    const call = decide(bash !== undefined, ids, res);
    // A named step (OpenCode's `read` of a file outside the project) goes out as it is.
    const fn =
      call && typeof call.step !== 'string'
        ? { name: call.step.name, arguments: JSON.stringify(call.step.args) }
        : call
          ? { name: 'bash', arguments: JSON.stringify({ ...argsFor(call.command), description: 'Append a line to a file' }) }
          : null;
    const base = { id: `chatcmpl-${Date.now()}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: String(json.model ?? 'fake') };
    if (json.stream !== true) {
      const message = call
        ? { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: fn }] }
        : { role: 'assistant', content: 'Done: the command ran.' };
      sendJson(res, 200, {
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
      return;
    }
    const sse = sseStart(res);
    sse(null, { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    await wait(hold);
    if (call) {
      sse(null, { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: call.id, type: 'function', function: fn }] }, finish_reason: null }] });
    } else {
      sse(null, { ...base, choices: [{ index: 0, delta: { content: 'Done: the command ran.' }, finish_reason: null }] });
    }
    sse(null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: call ? 'tool_calls' : 'stop' }] });
    sse(null, { ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    sse(null, '[DONE]');
    res.end();
  }

  // --- Gemini streamGenerateContent -------------------------------------------------------------
  async function gemini(res: ServerResponse, json: Record<string, unknown>, stream: boolean): Promise<void> {
    const contents =
      (json.contents as { role?: string; parts?: { functionResponse?: { id?: string; name?: string; response?: unknown } }[] }[] | undefined) ?? [];
    const ids: string[] = [];
    for (const c of contents) {
      for (const p of c.parts ?? []) {
        const fr = p.functionResponse;
        if (!fr) continue;
        const id = fr.id && issued.has(fr.id) ? fr.id : fr.name === 'run_shell_command' ? [...issued.keys()][0] : undefined;
        if (id) {
          ids.push(id);
          sawResult(id, fr.response);
        }
      }
    }
    const tools = (json.tools as { functionDeclarations?: { name?: string }[] }[] | undefined) ?? [];
    const hasShell = tools.some((t) => (t.functionDeclarations ?? []).some((f) => f.name === 'run_shell_command'));
    const call = decide(hasShell, ids, res);
    const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
    const parts = call
      ? [{ functionCall: { id: call.id, name: 'run_shell_command', args: { ...argsFor(call.command), description: 'Append a line to a file' } } }]
      : [{ text: jsonAnswer(json) ?? 'Done: the command ran.' }];
    const chunk = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-pro' };
    if (!stream) {
      sendJson(res, 200, chunk);
      return;
    }
    const sse = sseStart(res);
    sse(null, { candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-pro' });
    await wait(hold);
    sse(null, chunk);
    res.end();
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.port = (server.address() as { port: number }).port;
  state.url = `http://127.0.0.1:${state.port}`;
  state.close = () =>
    new Promise<void>((r) => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}

// Gemini CLI asks side questions that want JSON back (which model to route to, who speaks next):
// answer those with the least that lets it carry on.
function jsonAnswer(json: Record<string, unknown>): string | null {
  const cfg = json.generationConfig as { responseMimeType?: string; responseJsonSchema?: unknown; responseSchema?: unknown } | undefined;
  if (cfg?.responseMimeType !== 'application/json') return null;
  return JSON.stringify({ reasoning: 'scripted', next_speaker: 'user', model_choice: 'flash' });
}
