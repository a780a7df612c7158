import { describe, expect, it } from 'vitest';
import { createOpenAiCompatibleProvider } from '../../src/llm/openai-compatible-provider.ts';

/**
 * Server deviations recorded in WIRE-FORMATS §1.3–1.4, fed to the adapter as raw SSE bodies
 * through an injected fetch (no sockets needed to reproduce a byte sequence exactly).
 */
function providerAnswering(sse: string) {
  const bodies: unknown[] = [];
  const fetchStub: typeof fetch = async (_input, init) => {
    bodies.push(JSON.parse(String(init?.body)));
    return new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  const provider = createOpenAiCompatibleProvider({
    baseUrl: 'http://model.invalid/v1',
    model: 'm',
    fetch: fetchStub,
    maxRetries: 0,
  });
  return { provider, bodies };
}

const events = (...chunks: Array<Record<string, unknown> | string>) =>
  chunks.map((chunk) => (typeof chunk === 'string' ? chunk : `data: ${JSON.stringify(chunk)}\n\n`)).join('');
const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'c',
  model: 'served-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('openai-compatible provider: server quirks', () => {
  it('accepts a usage chunk whose choices are missing (vLLM, xAI)', async () => {
    const { provider } = providerAnswering(
      events(
        choice({ role: 'assistant', content: 'Hi' }),
        choice({}, 'stop'),
        { id: 'c', usage: { prompt_tokens: 5, completion_tokens: 1 } },
        'data: [DONE]\n\n',
      ),
    );
    const response = await provider.complete({ messages: [{ role: 'user', content: 'x' }] });
    expect(response).toMatchObject({
      text: 'Hi',
      finishReason: 'stop',
      usage: { inputTokens: 5, outputTokens: 1 },
      model: 'served-model',
    });
  });

  it('takes Ollama tool calls without index and reported with finish_reason "stop"', async () => {
    const call = { id: 'call_x', function: { name: 'save_user_profile', arguments: '{"habit_domain":"sleep"}' } };
    const { provider } = providerAnswering(
      events(choice({ role: 'assistant', content: '', tool_calls: [call] }), choice({}, 'stop'), 'data: [DONE]\n\n'),
    );
    const response = await provider.complete({ messages: [{ role: 'user', content: 'x' }] });
    expect(response.toolCalls).toEqual([
      { id: 'call_x', name: 'save_user_profile', arguments: '{"habit_domain":"sleep"}' },
    ]);
    expect(response.finishReason).toBe('tool-calls');
  });

  it('separates parallel calls that all reuse index 0 with different ids (LiteLLM, sglang)', async () => {
    const fragment = (id: string, habit: string) => ({
      index: 0,
      id,
      type: 'function',
      function: { name: 'save_user_profile', arguments: `{"habit_domain":"${habit}"}` },
    });
    const { provider } = providerAnswering(
      events(
        choice({ role: 'assistant', tool_calls: [fragment('call_1', 'walk')] }),
        choice({ tool_calls: [fragment('call_2', 'read')] }),
        choice({}, 'tool_calls'),
        'data: [DONE]\n\n',
      ),
    );
    const response = await provider.complete({ messages: [{ role: 'user', content: 'x' }] });
    expect(response.toolCalls.map((call) => [call.id, call.arguments])).toEqual([
      ['call_1', '{"habit_domain":"walk"}'],
      ['call_2', '{"habit_domain":"read"}'],
    ]);
  });

  it('ignores OpenRouter processing comments, CRLF line endings, unknown fields and reasoning deltas', async () => {
    const sse = events(
      ': OPENROUTER PROCESSING\r\n\r\n',
      { ...choice({ role: 'assistant', reasoning_content: 'thinking…' }), obfuscation: 'xyz' },
      choice({ content: 'Answer' }),
      choice({}, 'stop'),
    ).replaceAll('\n\n', '\r\n\r\n');
    const { provider } = providerAnswering(`${sse}data: [DONE]\r\n\r\n`);
    const deltas: string[] = [];
    const response = await provider.complete(
      { messages: [{ role: 'user', content: 'x' }] },
      { onTextDelta: (delta) => deltas.push(delta) },
    );
    expect(response.text).toBe('Answer');
    expect(deltas).toEqual(['Answer']);
  });

  it('sends earlier malformed tool arguments back as a JSON string the server can parse', async () => {
    const { provider, bodies } = providerAnswering(events(choice({ content: 'ok' }, 'stop'), 'data: [DONE]\n\n'));
    await provider.complete({
      messages: [
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_1', name: 'save_user_profile', arguments: '{"habit_domain":"wa' }],
        },
        { role: 'tool', toolCallId: 'call_1', content: 'error: arguments are not valid JSON' },
      ],
    });
    const sent = (bodies[0] as { messages: Array<{ tool_calls?: Array<{ function: { arguments: string } }> }> })
      .messages[0];
    expect(sent?.tool_calls?.[0]?.function.arguments).toBe(JSON.stringify('{"habit_domain":"wa'));
  });
});
