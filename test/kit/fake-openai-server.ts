import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 that speaks OpenAI chat completions the way providers do:
 * JSON, and SSE streaming with a role chunk, content deltas, tool-call argument fragments
 * (several calls, interleaved), `: keep-alive` comments, a usage-only last chunk and
 * `data: [DONE]`. It answers from a script, records every request, and injects faults.
 */

// ---------------------------------------------------------------------------------------------
// Faults and the script

export type FakeFault =
  /** An error status before any streaming; `body` defaults to an OpenAI-style `{error}`. */
  | { fault: 'status'; status: number; retryAfter?: string; body?: unknown }
  /** Accepts the request and never answers (cleaned up by `close()`). */
  | { fault: 'hang' }
  /** Sends `afterChunks` data events, then destroys the socket (or, `graceful`, ends the response). */
  | { fault: 'cut'; afterChunks: number; graceful?: boolean; reply?: FakeReply }
  /** Sends `afterChunks` data events, then goes silent with the connection open. */
  | { fault: 'stall'; afterChunks: number; reply?: FakeReply }
  /** A `data:` line that is not JSON after `afterChunks` (default 1) events; the stream then goes on. */
  | { fault: 'invalid-json-chunk'; afterChunks?: number; reply?: FakeReply }
  /** The last tool call's arguments stop halfway, with `finish_reason: "length"`. */
  | { fault: 'truncated-tool-arguments'; reply?: FakeReply }
  /** An `{error}` data event under HTTP 200 after `afterChunks` (default 1) events, and no `[DONE]`. */
  | { fault: 'error-event'; afterChunks?: number; error: Record<string, unknown>; reply?: FakeReply };

export type FakeAnswer = FakeReply | FakeFault;

/** The parsed request body, loosely typed: tests assert on it. */
export type ChatRequestBody = Record<string, any>;

export type FakeScript =
  readonly FakeAnswer[] | ((body: ChatRequestBody, callIndex: number) => FakeAnswer | Promise<FakeAnswer>);

export interface RecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: ChatRequestBody;
}

export interface FakeOpenAiServer {
  /** `http://127.0.0.1:<port>/v1`, the value to configure as a provider's base URL. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  setScript(script: FakeScript): void;
  start(): Promise<void>;
  /** Closes the server and every open connection (hanging and stalled ones too). */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const DEFAULT_TRUNCATED: FakeReply = {
  toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'walking', preferred_time: '08:00' } }],
};

export function createFakeOpenAiServer(initialScript: FakeScript = []): FakeOpenAiServer {
  let script = initialScript;
  let port = 0;
  const requests: RecordedRequest[] = [];
  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) =>
      sendJson(response, 500, { error: { message: String(error), type: 'server_error' } }),
    );
  });

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0] ?? '';
    if (request.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/chat/completions')) {
      return sendJson(response, 404, {
        error: { message: `no route ${request.method} ${path}`, type: 'invalid_request_error' },
      });
    }
    const body = parseJson(await readBody(request));
    if (!body)
      return sendJson(response, 400, { error: { message: 'request body is not JSON', type: 'invalid_request_error' } });
    const callIndex = requests.length;
    requests.push({ path, headers: request.headers, body });
    const answer = await answerFor(script, body, callIndex);
    const context: ChunkContext = {
      requestModel: String(body.model ?? 'fake-model'),
      messageCount: Array.isArray(body.messages) ? body.messages.length : 0,
      includeUsage: body.stream_options?.include_usage === true,
      completionId: `chatcmpl-fake-${callIndex + 1}`,
    };
    if ('fault' in answer && (answer.fault === 'status' || answer.fault === 'hang'))
      return sendEarlyFault(response, answer);
    if (body.stream !== true) return sendJson(response, 200, buildCompletion(replyOf(answer), context));
    await streamAnswer(response, answer, context);
  }

  return {
    get baseUrl() {
      return `http://127.0.0.1:${port}/v1`;
    },
    requests,
    setScript(next) {
      script = next;
    },
    async start() {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    },
    async close() {
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
    async [Symbol.asyncDispose]() {
      await this.close();
    },
  };
}

export async function startFakeOpenAiServer(script: FakeScript = []): Promise<FakeOpenAiServer> {
  const server = createFakeOpenAiServer(script);
  await server.start();
  return server;
}

async function answerFor(script: FakeScript, body: ChatRequestBody, callIndex: number): Promise<FakeAnswer> {
  if (typeof script === 'function') return script(body, callIndex);
  const list = script as readonly FakeAnswer[];
  return (
    list[callIndex] ?? {
      fault: 'status',
      status: 500,
      body: { error: { message: `fake server: no scripted answer for call #${callIndex + 1}`, type: 'server_error' } },
    }
  );
}

function replyOf(answer: FakeAnswer): FakeReply {
  if (!('fault' in answer)) return answer;
  if (answer.fault === 'truncated-tool-arguments') return truncated(answer.reply ?? DEFAULT_TRUNCATED);
  return 'reply' in answer && answer.reply ? answer.reply : { text: 'Hello from the fake model, streamed in pieces.' };
}

function truncated(reply: FakeReply): FakeReply {
  const calls = normalizedCalls(reply);
  const last = calls.at(-1);
  if (!last) return reply;
  const cut = { ...last, arguments: last.arguments.slice(0, Math.floor(last.arguments.length / 2)) };
  return { ...reply, toolCalls: [...calls.slice(0, -1), cut], finishReason: 'length' };
}

function sendEarlyFault(response: http.ServerResponse, fault: Extract<FakeFault, { fault: 'status' | 'hang' }>): void {
  if (fault.fault === 'hang') return;
  if (fault.retryAfter !== undefined) response.setHeader('retry-after', fault.retryAfter);
  sendJson(response, fault.status, fault.body ?? defaultErrorBody(fault.status));
}

function defaultErrorBody(status: number) {
  const known: Record<number, [string, string]> = {
    400: ['invalid_request_error', 'invalid_request'],
    401: ['invalid_request_error', 'invalid_api_key'],
    402: ['insufficient_credits', 'payment_required'],
    403: ['invalid_request_error', 'forbidden'],
    404: ['invalid_request_error', 'model_not_found'],
    429: ['requests', 'rate_limit_exceeded'],
  };
  const [type, code] = known[status] ?? ['server_error', 'server_error'];
  return { error: { message: `fake server says ${status} (${code})`, type, param: null, code } };
}

async function streamAnswer(response: http.ServerResponse, answer: FakeAnswer, context: ChunkContext): Promise<void> {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const events = buildStreamChunks(replyOf(answer), context).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  const fault = 'fault' in answer ? answer : undefined;
  const limit = eventsBeforeFault(fault, events.length);
  await write(response, ': keep-alive\n\n');
  for (const [index, event] of events.slice(0, limit).entries()) {
    await write(response, event);
    if (index === 0) await write(response, ': keep-alive\n\n');
  }
  if (response.destroyed) return;
  switch (fault?.fault) {
    case 'cut':
      return void (fault.graceful ? response.end() : response.socket?.destroy());
    case 'stall':
      return;
    case 'error-event':
      return void response.end(`data: ${JSON.stringify({ error: fault.error })}\n\n`);
    case 'invalid-json-chunk':
      await write(response, 'data: {"id":"chatcmpl-broken","choices":[{"index":0,"delta":{"content":"oops"\n\n');
      for (const event of events.slice(limit)) await write(response, event);
  }
  response.end('data: [DONE]\n\n');
}

function eventsBeforeFault(fault: FakeFault | undefined, total: number): number {
  switch (fault?.fault) {
    case 'cut':
    case 'stall':
      return fault.afterChunks;
    case 'invalid-json-chunk':
    case 'error-event':
      return fault.afterChunks ?? 1;
    default:
      return total;
  }
}

/**
 * Writes one SSE piece in two halves on separate turns of the event loop, so the client sees
 * events (and multi-byte characters) split across network reads, as on a real connection.
 */
async function write(response: http.ServerResponse, text: string): Promise<void> {
  const bytes = Buffer.from(text, 'utf8');
  const middle = Math.floor(bytes.length / 2);
  for (const part of [bytes.subarray(0, middle), bytes.subarray(middle)]) {
    if (response.destroyed || response.writableEnded) return;
    response.write(part);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return void response.destroy();
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

async function readBody(request: http.IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function parseJson(text: string): ChatRequestBody | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as ChatRequestBody) : undefined;
  } catch {
    return undefined;
  }
}

/** The text of the last user message of a recorded request body. */
export function lastUserText(body: ChatRequestBody): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ role?: string; content?: unknown }>) : [];
  const last = messages.filter((message) => message.role === 'user').at(-1);
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}

// ---------------------------------------------------------------------------------------------
// Wire bodies

export interface FakeToolCall {
  name: string;
  /** Objects are JSON-stringified; strings are sent as is. */
  arguments: string | Record<string, unknown>;
  id?: string;
}

export interface FakeReply {
  text?: string;
  /** Streamed first as `delta.reasoning_content` (DeepSeek, llama.cpp), before any content. */
  reasoning?: string;
  toolCalls?: FakeToolCall[];
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** The model id the server reports; default: the requested one. */
  model?: string;
  /** Default: a deterministic count from the request and reply. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Characters per content delta. Default 4. */
  chunkSize?: number;
}

export type Chunk = Record<string, unknown>;

export interface ChunkContext {
  requestModel: string;
  messageCount: number;
  includeUsage: boolean;
  completionId: string;
}

const CREATED = 1_700_000_000;

/** Role chunk, content deltas, interleaved tool-call fragments, finish chunk, usage-only chunk. */
export function buildStreamChunks(reply: FakeReply, context: ChunkContext): Chunk[] {
  const base = {
    id: context.completionId,
    object: 'chat.completion.chunk',
    created: CREATED,
    model: reply.model ?? context.requestModel,
    system_fingerprint: 'fp_fake',
  };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): Chunk => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null,
  });
  const calls = normalizedCalls(reply);
  const chunks: Chunk[] = [chunk({ role: 'assistant', content: calls.length > 0 && !reply.text ? null : '' })];
  for (const piece of splitEvery(reply.reasoning ?? '', reply.chunkSize ?? 4))
    chunks.push(chunk({ reasoning_content: piece }));
  for (const piece of splitEvery(reply.text ?? '', reply.chunkSize ?? 4)) chunks.push(chunk({ content: piece }));
  chunks.push(...toolCallChunks(calls, chunk));
  chunks.push(chunk({}, finishReasonOf(reply)));
  if (context.includeUsage) chunks.push({ ...base, choices: [], usage: usageOf(reply, context) });
  return chunks;
}

/**
 * Every call's first fragment (index, id, type, name, empty arguments) comes first, then the
 * argument pieces of all calls interleave: the case clients that track "the last call" get wrong.
 */
function toolCallChunks(
  calls: Array<Required<FakeToolCall> & { arguments: string }>,
  chunk: (delta: Record<string, unknown>) => Chunk,
): Chunk[] {
  const starts = calls.map((call, index) =>
    chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
  );
  const pieces = calls.map((call) => splitEvery(call.arguments, 7));
  const fragments: Chunk[] = [];
  const rounds = Math.max(0, ...pieces.map((list) => list.length));
  for (let round = 0; round < rounds; round++) {
    pieces.forEach((list, index) => {
      const piece = list[round];
      if (piece !== undefined) fragments.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
  }
  return [...starts, ...fragments];
}

export function buildCompletion(reply: FakeReply, context: ChunkContext): Chunk {
  const calls = normalizedCalls(reply);
  const toolCalls = calls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  return {
    id: context.completionId,
    object: 'chat.completion',
    created: CREATED,
    model: reply.model ?? context.requestModel,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? (calls.length > 0 ? null : ''),
          ...(calls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReasonOf(reply),
      },
    ],
    usage: usageOf(reply, context),
  };
}

function normalizedCalls(reply: FakeReply): Array<Required<FakeToolCall> & { arguments: string }> {
  return (reply.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_fake_${index + 1}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
}

function finishReasonOf(reply: FakeReply): string {
  return reply.finishReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop');
}

function usageOf(reply: FakeReply, context: ChunkContext) {
  const usage = reply.usage ?? {
    prompt_tokens: 10 * context.messageCount,
    completion_tokens:
      Math.ceil((reply.text ?? '').length / 4) +
      normalizedCalls(reply).reduce((sum, call) => sum + Math.ceil(call.arguments.length / 4), 0),
  };
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

/** Splits on code points, so no piece ends inside a character. */
export function splitEvery(text: string, size: number): string[] {
  const characters = Array.from(text);
  const pieces: string[] = [];
  for (let start = 0; start < characters.length; start += size)
    pieces.push(characters.slice(start, start + size).join(''));
  return pieces;
}
