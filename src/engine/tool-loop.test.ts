import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LlmProvider, LlmRequest, LlmResponse } from '../llm/llm-provider.ts';
import { defineTool } from '../tools/define-tool.ts';
import { runToolLoop } from './tool-loop.ts';

type Step = Partial<Pick<LlmResponse, 'text' | 'toolCalls'>>;

/** A provider that answers from a list and keeps what it was asked. */
function modelSaying(...steps: Step[]): LlmProvider & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    name: 'scripted',
    model: 'script',
    requests,
    async complete(request) {
      requests.push(structuredClone(request));
      const step = steps[requests.length - 1] ?? { text: '' };
      return { text: step.text ?? '', toolCalls: step.toolCalls ?? [], finishReason: 'stop', model: 'script' };
    },
  };
}

const calls: string[] = [];
const echo = defineTool({
  name: 'echo',
  description: 'Echoes a word',
  input: z.object({ word: z.string().min(1) }),
  execute: ({ word }) => {
    calls.push(word);
    return `echoed ${word}`;
  },
});
const broken = defineTool({
  name: 'broken',
  description: 'Always throws',
  input: z.object({}),
  execute: () => {
    throw new Error('disk on fire');
  },
});

const call = (name: string, args: unknown, id = `call_${name}`) => ({
  id,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});
let clock = 0;
const base = {
  tools: [echo, broken],
  fallbackText: 'FALLBACK',
  signal: new AbortController().signal,
  elapsed: () => (clock += 1),
  messages: [{ role: 'user' as const, content: 'hi' }],
};

describe('runToolLoop', () => {
  it('replies with plain text in one model call', async () => {
    const provider = modelSaying({ text: 'Hello there' });
    const result = await runToolLoop({ ...base, provider });
    expect(result).toMatchObject({ text: 'Hello there', endedBy: 'reply', modelCalls: 1, toolRounds: 0 });
    expect(provider.requests[0]?.tools?.map((tool) => tool.name)).toEqual(['echo', 'broken']);
  });

  it('runs tools, feeds results back, and ends on the next text', async () => {
    const provider = modelSaying(
      { toolCalls: [call('echo', { word: 'a' }), call('echo', { word: 'b' }, 'c2')] },
      { text: 'Done.' },
    );
    const result = await runToolLoop({ ...base, provider });
    expect(result.text).toBe('Done.');
    expect(result.toolCalls.map((executed) => executed.outcome)).toEqual([
      { status: 'ok', result: 'echoed a' },
      { status: 'ok', result: 'echoed b' },
    ]);
    const second = provider.requests[1]!.messages;
    expect(second.slice(-3)).toEqual([
      { role: 'assistant', content: '', toolCalls: [call('echo', { word: 'a' }), call('echo', { word: 'b' }, 'c2')] },
      { role: 'tool', toolCallId: 'call_echo', content: 'echoed a' },
      { role: 'tool', toolCallId: 'c2', content: 'echoed b' },
    ]);
  });

  it('with text and tool calls together, runs the tools and replies with that text, no other model call', async () => {
    const provider = modelSaying({ text: 'Saved it!', toolCalls: [call('echo', { word: 'x' })] });
    const result = await runToolLoop({ ...base, provider });
    expect(result).toMatchObject({ text: 'Saved it!', modelCalls: 1, toolRounds: 1 });
  });

  it('turns unknown tools, bad JSON, invalid arguments and thrown errors into results the model reads', async () => {
    const provider = modelSaying(
      { toolCalls: [call('nope', {}), call('echo', '{"word": '), call('echo', { word: 42 }), call('broken', {})] },
      { text: 'Recovered.' },
    );
    const result = await runToolLoop({ ...base, provider });
    const outcomes = result.toolCalls.map((executed) => executed.outcome);
    expect(outcomes.every((outcome) => outcome.status === 'error')).toBe(true);
    expect(outcomes[0]?.result).toMatch(/unknown tool "nope".*echo, broken/);
    expect(outcomes[1]?.result).toMatch(/not valid JSON/);
    expect(outcomes[2]?.result).toMatch(/word: .*string/i);
    expect(outcomes[3]?.result).toMatch(/broken failed: disk on fire/);
    expect(result.text).toBe('Recovered.');
  });

  it('ends with the fallback reply right after the 10th round of tools, with no 11th model call', async () => {
    const provider = modelSaying(
      ...Array.from({ length: 20 }, (_, index) => ({ toolCalls: [call('echo', { word: `w${index}` })] })),
    );
    const result = await runToolLoop({ ...base, provider });
    expect(result).toMatchObject({ text: 'FALLBACK', endedBy: 'round-limit', toolRounds: 10, modelCalls: 10 });
    expect(result.toolCalls.map((executed) => executed.outcome.result)).toEqual(
      Array.from({ length: 10 }, (_, index) => `echoed w${index}`),
    );
    expect(provider.requests).toHaveLength(10);
  });

  it('with text and tool calls on the 10th round, runs them and replies with that text', async () => {
    const rounds = Array.from({ length: 9 }, (_, index) => ({ toolCalls: [call('echo', { word: `w${index}` })] }));
    const provider = modelSaying(
      ...rounds,
      { text: 'Last one!', toolCalls: [call('echo', { word: 'w9' })] },
      { text: 'never asked' },
    );
    const result = await runToolLoop({ ...base, provider });
    expect(result).toMatchObject({ text: 'Last one!', endedBy: 'reply', toolRounds: 10, modelCalls: 10 });
    expect(result.toolCalls.at(-1)?.outcome.result).toBe('echoed w9');
  });

  it('never replies with empty text', async () => {
    const result = await runToolLoop({ ...base, provider: modelSaying({ text: '  ' }) });
    expect(result).toMatchObject({ text: 'FALLBACK', endedBy: 'empty-response' });
  });
});
