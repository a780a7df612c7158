import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lastUserText, startFakeOpenAiServer, type FakeOpenAiServer } from '../kit/fake-openai-server.ts';

/** The kit speaks the wire format itself; these check it byte for byte, with plain fetch. */
let server: FakeOpenAiServer;
beforeEach(async () => {
  server = await startFakeOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${server.baseUrl.replace(/\/v1$/, '')}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

function dataEvents(sse: string): Array<Record<string, any>> {
  return sse
    .split('\n\n')
    .filter((event) => event.startsWith('data: ') && event !== 'data: [DONE]')
    .map((event) => JSON.parse(event.slice('data: '.length)));
}

describe('fake OpenAI server', () => {
  it('streams role, content, interleaved tool-call fragments, finish, usage-only chunk and [DONE]', async () => {
    server.setScript((body) => ({
      text: `you said ${lastUserText(body)}`,
      toolCalls: [
        { id: 'call_A', name: 'a', arguments: { x: 'alpha beta' } },
        { id: 'call_B', name: 'b', arguments: { y: 'gamma delta' } },
      ],
    }));
    const response = await post('/v1/chat/completions', {
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hello' }],
    });
    const sse = await response.text();

    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(sse.startsWith(': keep-alive\n\n')).toBe(true);
    expect(sse.endsWith('data: [DONE]\n\n')).toBe(true);
    const chunks = dataEvents(sse);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === 'm')).toBe(true);
    expect(chunks[0]?.choices[0].delta.role).toBe('assistant');
    const content = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(content).toBe('you said hello');
    const fragments = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    expect(fragments[0]).toEqual({ index: 0, id: 'call_A', type: 'function', function: { name: 'a', arguments: '' } });
    expect(fragments[1]).toMatchObject({ index: 1, id: 'call_B' });
    expect(fragments.slice(2).map((fragment) => fragment.index)).toEqual([0, 1, 0, 1, 0, 1]);
    const argumentsOf = (index: number) =>
      fragments
        .filter((fragment) => fragment.index === index)
        .map((fragment) => fragment.function.arguments)
        .join('');
    expect([argumentsOf(0), argumentsOf(1)]).toEqual(['{"x":"alpha beta"}', '{"y":"gamma delta"}']);
    expect(
      fragments.slice(2).every((fragment) => fragment.id === undefined && fragment.function.name === undefined),
    ).toBe(true);
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 10, total_tokens: expect.any(Number) },
    });
  });

  it('answers JSON when not streaming, on /chat/completions too, and records body and headers', async () => {
    server.setScript([{ text: 'plain' }]);
    const response = await post('/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(await response.json()).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { role: 'assistant', content: 'plain' }, finish_reason: 'stop' }],
    });
    expect(server.requests).toMatchObject([
      { path: '/chat/completions', body: { model: 'm' }, headers: { 'content-type': 'application/json' } },
    ]);
  });

  it('injects status faults with retry-after, and answers 500 when the script runs out', async () => {
    server.setScript([{ fault: 'status', status: 429, retryAfter: '3' }]);
    const limited = await post('/v1/chat/completions', { messages: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(await limited.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
    expect((await post('/v1/chat/completions', { messages: [] })).status).toBe(500);
  });

  it('closes promptly with hanging and stalled connections open', async () => {
    server.setScript([{ fault: 'hang' }, { fault: 'stall', afterChunks: 1 }]);
    const hanging = post('/v1/chat/completions', { stream: true, messages: [] }).catch((error: unknown) => error);
    const stalled = await post('/v1/chat/completions', { stream: true, messages: [] });
    const reading = stalled.text().catch((error: unknown) => error);
    await server.close();
    expect(await hanging).toBeInstanceOf(Error);
    expect(await reading).toBeInstanceOf(Error);
  });
});
