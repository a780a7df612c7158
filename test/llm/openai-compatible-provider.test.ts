import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.ts';
import { systemClock } from '../../src/core/clock.ts';
import { AppError } from '../../src/core/errors.ts';
import type { OpenAiCompatibleProviderOptions, RetryInfo } from '../../src/llm/openai-compatible-provider.ts';
import { createOpenAiCompatibleProvider } from '../../src/llm/openai-compatible-provider.ts';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import type { FakeScript } from '../kit/fake-openai-server.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../kit/fake-openai-server.ts';
import { waitFor } from '../kit/wait-for.ts';

let server: FakeOpenAiServer;
beforeEach(async () => {
  server = await startFakeOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

/** A clock whose sleeps return at once and are recorded, so tests see the requested waits. */
function recordingClock() {
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => new Date('2026-03-01T12:00:00Z'),
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      sleeps.push(ms);
    },
  };
  return { clock, sleeps };
}

function setup(script: FakeScript, overrides: Partial<OpenAiCompatibleProviderOptions> = {}) {
  server.setScript(script);
  const { clock, sleeps } = recordingClock();
  const retries: RetryInfo[] = [];
  const provider = createOpenAiCompatibleProvider({
    baseUrl: server.baseUrl,
    apiKey: 'sk-test-123',
    model: 'gpt-test',
    clock,
    backoff: { random: () => 0 },
    onRetry: (info) => retries.push(info),
    ...overrides,
  });
  const deltas: string[] = [];
  const call = (request: Partial<LlmRequest> = {}, signal?: AbortSignal) =>
    provider.complete(
      { messages: [{ role: 'user', content: 'hi' }], ...request },
      { signal, onTextDelta: (delta) => deltas.push(delta) },
    );
  return { provider, call, deltas, sleeps, retries };
}

async function failureOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('openai-compatible provider: streaming', () => {
  it('streams text deltas in order and reports text, finish reason, model and usage', async () => {
    const text = 'Hello there! Ready for a 5-minute walk? ✨ 你好, Привет.';
    const { call, deltas, provider } = setup([
      { text, model: 'gpt-test-2026-01-01', usage: { prompt_tokens: 42, completion_tokens: 17 } },
    ]);

    const response = await call();

    expect(provider.name).toBe('openai-compatible');
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(text);
    expect(response).toEqual({
      text,
      toolCalls: [],
      finishReason: 'stop',
      model: 'gpt-test-2026-01-01',
      usage: { inputTokens: 42, outputTokens: 17 },
    });
  });

  it('keeps reasoning (reasoning_content) apart from the text: never streamed as text', async () => {
    const { call, deltas } = setup([
      { reasoning: 'The user greets me; greet back.', text: 'Hi!' },
      { reasoning: 'Only thinking this time.' },
    ]);
    expect(await call()).toMatchObject({ text: 'Hi!', reasoning: 'The user greets me; greet back.' });
    expect(deltas.join('')).toBe('Hi!');
    expect(await call()).toMatchObject({ text: '', reasoning: 'Only thinking this time.', toolCalls: [] });
  });

  it('reassembles two tool calls whose argument fragments interleave', async () => {
    const { call } = setup([
      {
        text: 'Let me note that.',
        toolCalls: [
          { id: 'call_A', name: 'save_user_profile', arguments: { habit_domain: 'walking', preferred_time: '08:00' } },
          { id: 'call_B', name: 'transition_state', arguments: '{"target_state": "FEEDBACK", "delay_minutes": 30}' },
        ],
      },
    ]);

    const response = await call();

    expect(response.text).toBe('Let me note that.');
    expect(response.finishReason).toBe('tool-calls');
    expect(response.toolCalls).toEqual([
      { id: 'call_A', name: 'save_user_profile', arguments: '{"habit_domain":"walking","preferred_time":"08:00"}' },
      { id: 'call_B', name: 'transition_state', arguments: '{"target_state": "FEEDBACK", "delay_minutes": 30}' },
    ]);
  });

  it('keeps truncated tool arguments as raw text instead of failing', async () => {
    const { call } = setup([
      {
        fault: 'truncated-tool-arguments',
        reply: {
          toolCalls: [
            { id: 'call_T', name: 'save_user_profile', arguments: '{"habit_domain":"walking","minutes":10}' },
          ],
        },
      },
    ]);

    const response = await call();

    expect(response.finishReason).toBe('length');
    expect(response.toolCalls).toEqual([{ id: 'call_T', name: 'save_user_profile', arguments: '{"habit_domain":"wa' }]);
  });

  it('sends the model, messages with tool calls and results, tools, stream flags and the API key', async () => {
    const { call } = setup([{ text: 'ok' }]);
    await call({
      model: 'gpt-override',
      temperature: 0.2,
      maxOutputTokens: 300,
      messages: [
        { role: 'system', content: 'You are a coach.' },
        { role: 'user', content: 'I want to walk.' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_1', name: 'save_user_profile', arguments: '{"habit_domain":"walking"}' }],
        },
        { role: 'tool', toolCallId: 'call_1', content: '{"ok":true}' },
        { role: 'assistant', content: 'Saved.' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          name: 'save_user_profile',
          description: 'Saves the profile.',
          parameters: { type: 'object', properties: { habit_domain: { type: 'string' } } },
        },
      ],
    });

    expect(server.requests).toHaveLength(1);
    const [{ path, headers, body }] = server.requests as [(typeof server.requests)[number]];
    expect(path).toBe('/v1/chat/completions');
    expect(headers.authorization).toBe('Bearer sk-test-123');
    expect(body).toMatchObject({
      model: 'gpt-override',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      max_tokens: 300,
    });
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are a coach.' },
      { role: 'user', content: 'I want to walk.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'save_user_profile', arguments: '{"habit_domain":"walking"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' },
      { role: 'assistant', content: 'Saved.' },
      { role: 'user', content: 'Thanks' },
    ]);
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'save_user_profile',
          description: 'Saves the profile.',
          parameters: { type: 'object', properties: { habit_domain: { type: 'string' } } },
        },
      },
    ]);
  });

  it('sends no Authorization header without an API key, and the configured model by default', async () => {
    const { call } = setup([{ text: 'ok' }], { apiKey: undefined });
    const response = await call();
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(server.requests[0]?.body.model).toBe('gpt-test');
    expect(response.model).toBe('gpt-test');
  });
});

describe('openai-compatible provider: retries', () => {
  it('retries a 429 after the retry-after the server asked for', async () => {
    const { call, sleeps, retries } = setup([
      { fault: 'status', status: 429, retryAfter: '2' },
      { text: 'second time lucky' },
    ]);
    const response = await call();
    expect(response.text).toBe('second time lucky');
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([2_000]);
    expect(retries).toMatchObject([{ attempt: 1, delayMs: 2_000, error: { code: 'llm_unavailable' } }]);
  });

  it('retries a 500 with exponential backoff', async () => {
    const { call, sleeps } = setup([
      { fault: 'status', status: 500 },
      { fault: 'status', status: 502 },
      { text: 'ok' },
    ]);
    expect((await call()).text).toBe('ok');
    expect(sleeps).toEqual([250, 500]);
  });

  it('gives up on a lasting 503 with a retryable llm_unavailable', async () => {
    const { call, sleeps } = setup(() => ({ fault: 'status', status: 503 }));
    const error = await failureOf(call());
    expect(error).toMatchObject({ code: 'llm_unavailable', retryable: true, fault: 'model' });
    expect(error.cause).toBeDefined();
    expect(server.requests).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
  });

  it.each([401, 402, 403, 400, 404])('rejects a %i at once, with exactly one request', async (status) => {
    const { call, sleeps } = setup(() => ({ fault: 'status', status }));
    const error = await failureOf(call());
    expect(error).toMatchObject({ code: 'llm_rejected', retryable: false, fault: 'model' });
    expect(error.message).toContain(String(status));
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('does not retry a 429 whose quota is exhausted', async () => {
    const body = {
      error: {
        message: 'You exceeded your current quota, please check your plan and billing details.',
        type: 'insufficient_quota',
        param: null,
        code: 'insufficient_quota',
      },
    };
    const { call } = setup(() => ({ fault: 'status', status: 429, body }));
    expect(await failureOf(call())).toMatchObject({ code: 'llm_rejected', retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it('retries network errors, then reports llm_unavailable', async () => {
    const { call, retries } = setup([]);
    await server.close();
    const error = await failureOf(call());
    expect(error).toMatchObject({ code: 'llm_unavailable', retryable: true });
    expect(retries).toHaveLength(2);
  });
});

describe('openai-compatible provider: broken streams', () => {
  it('retries a stream cut before any text', async () => {
    const { call, deltas } = setup([{ fault: 'cut', afterChunks: 1 }, { text: 'whole answer' }]);
    expect((await call()).text).toBe('whole answer');
    expect(deltas.join('')).toBe('whole answer');
    expect(server.requests).toHaveLength(2);
  });

  it('retries a stream that ends cleanly before its finish chunk', async () => {
    const { call } = setup([{ fault: 'cut', afterChunks: 1, graceful: true }, { text: 'ok' }]);
    expect((await call()).text).toBe('ok');
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a stream cut after text reached the caller', async () => {
    const { call, deltas } = setup([
      { fault: 'cut', afterChunks: 3, reply: { text: 'abcdefghijklmnop' } },
      { text: 'never sent' },
    ]);
    const error = await failureOf(call());
    expect(error).toMatchObject({ code: 'llm_unavailable', fault: 'model' });
    expect(deltas.join('')).toBe('abcdefgh');
    expect(server.requests).toHaveLength(1);
  });

  it('retries a stream cut after text when no one was listening to the text', async () => {
    server.setScript([{ fault: 'cut', afterChunks: 3 }, { text: 'fresh' }]);
    const provider = createOpenAiCompatibleProvider({
      baseUrl: server.baseUrl,
      model: 'm',
      clock: recordingClock().clock,
    });
    expect((await provider.complete({ messages: [{ role: 'user', content: 'hi' }] })).text).toBe('fresh');
  });

  it('retries a stall before text; a stall after text is an llm_timeout', async () => {
    const before = setup([{ fault: 'stall', afterChunks: 1 }, { text: 'ok' }], { idleTimeoutMs: 300 });
    expect((await before.call()).text).toBe('ok');

    server.requests.length = 0;
    const after = setup([{ fault: 'stall', afterChunks: 2, reply: { text: 'partial text here' } }], {
      idleTimeoutMs: 300,
    });
    expect(await failureOf(after.call())).toMatchObject({ code: 'llm_timeout', fault: 'model' });
    expect(after.deltas.join('')).toBe('part');
    expect(server.requests).toHaveLength(1);
  });

  it('times out a server that never answers (idle timeout per attempt)', async () => {
    const { call } = setup(() => ({ fault: 'hang' }), { idleTimeoutMs: 80, maxRetries: 1 });
    expect(await failureOf(call())).toMatchObject({ code: 'llm_timeout', retryable: true, fault: 'model' });
    expect(server.requests).toHaveLength(2);
  });

  it('times out the whole call, retries included', async () => {
    const { call } = setup(() => ({ fault: 'hang' }), { timeoutMs: 150, idleTimeoutMs: 60_000 });
    const error = await failureOf(call());
    expect(error).toMatchObject({ code: 'llm_timeout', fault: 'model' });
    expect(error.cause).toBeDefined();
    expect(server.requests).toHaveLength(1);
  });

  it('reports an invalid JSON chunk as llm_bad_response without retrying', async () => {
    const { call } = setup(() => ({ fault: 'invalid-json-chunk' }));
    expect(await failureOf(call())).toMatchObject({ code: 'llm_bad_response', retryable: false, fault: 'model' });
    expect(server.requests).toHaveLength(1);
  });

  it('retries a mid-stream server error event; a 4xx-coded one is rejected', async () => {
    const { call } = setup([
      { fault: 'error-event', error: { message: 'The server had an error', type: 'server_error' } },
      { text: 'ok' },
    ]);
    expect((await call()).text).toBe('ok');

    server.requests.length = 0;
    const moderated = setup(() => ({ fault: 'error-event', error: { code: 403, message: 'flagged by moderation' } }));
    expect(await failureOf(moderated.call())).toMatchObject({ code: 'llm_rejected' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('openai-compatible provider: cancellation and callbacks', () => {
  it('rejects with the signal reason when aborted mid-request', async () => {
    const { call } = setup(() => ({ fault: 'hang' }));
    const controller = new AbortController();
    const pending = call({}, controller.signal);
    await waitFor(() => server.requests.length === 1, { what: 'the request' });
    const reason = new Error('user went away');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects with the signal reason when aborted during a backoff wait', async () => {
    const { call, retries } = setup([{ fault: 'status', status: 503, retryAfter: '30' }], { clock: systemClock });
    const controller = new AbortController();
    const pending = call({}, controller.signal);
    await waitFor(() => retries.length === 1, { what: 'the retry wait' });
    controller.abort('stop');
    await expect(pending).rejects.toBe('stop');
    expect(server.requests).toHaveLength(1);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const { call } = setup([{ text: 'ok' }]);
    await expect(call({}, AbortSignal.abort('already'))).rejects.toBe('already');
    expect(server.requests).toHaveLength(0);
  });

  it('passes an exception thrown by onTextDelta through unchanged, without retrying', async () => {
    server.setScript([{ text: 'hello world' }, { text: 'again' }]);
    const provider = createOpenAiCompatibleProvider({
      baseUrl: server.baseUrl,
      model: 'm',
      clock: recordingClock().clock,
    });
    const boom = new Error('listener broke');
    const pending = provider.complete(
      { messages: [{ role: 'user', content: 'hi' }] },
      {
        onTextDelta: () => {
          throw boom;
        },
      },
    );
    await expect(pending).rejects.toBe(boom);
    expect(server.requests).toHaveLength(1);
  });
});
