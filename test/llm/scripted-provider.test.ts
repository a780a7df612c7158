import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.ts';
import type { LlmMessage } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { waitFor } from '../kit/wait-for.ts';

const ask = (content: string): { messages: LlmMessage[] } => ({ messages: [{ role: 'user', content }] });

describe('scripted provider', () => {
  it('answers an array script in order, streams text in pieces and records requests', async () => {
    const provider = createScriptedProvider([
      { text: 'Hello there, friend!' },
      {
        toolCalls: [
          { name: 'save', arguments: { a: 1 } },
          { name: 'raw', arguments: '{"broken":', id: 'call_x' },
        ],
      },
    ]);
    const deltas: string[] = [];

    const first = await provider.complete(ask('one'), { onTextDelta: (delta) => deltas.push(delta) });
    const second = await provider.complete(ask('two'));

    expect(provider.name).toBe('scripted');
    expect(first).toEqual({ text: 'Hello there, friend!', toolCalls: [], finishReason: 'stop', model: 'scripted' });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Hello there, friend!');
    expect(second.finishReason).toBe('tool-calls');
    expect(second.toolCalls).toEqual([
      { id: 'call_2_1', name: 'save', arguments: '{"a":1}' },
      { id: 'call_x', name: 'raw', arguments: '{"broken":' },
    ]);
    expect(provider.requests.map((request) => request.messages[0]?.content)).toEqual(['one', 'two']);
  });

  it('fails clearly when an array script runs out', async () => {
    const provider = createScriptedProvider([{ text: 'only one' }]);
    await provider.complete(ask('a'));
    await expect(provider.complete(ask('b'))).rejects.toThrow(/script has 1 steps but call #2/);
  });

  it('passes request and call index to a script function, and throws scripted errors', async () => {
    const failure = new Error('model down');
    const provider = createScriptedProvider(
      (request, index) => (index === 1 ? { error: failure } : { text: `${index}:${request.messages.at(-1)?.content}` }),
      { model: 'fake-1' },
    );
    expect(await provider.complete(ask('hi'))).toMatchObject({ text: '0:hi', model: 'fake-1' });
    await expect(provider.complete(ask('again'))).rejects.toBe(failure);
  });

  it('snapshots requests so later changes by the caller do not rewrite history', async () => {
    const provider = createScriptedProvider(() => ({ text: 'ok' }));
    const request = ask('original');
    await provider.complete(request);
    request.messages.push({ role: 'assistant', content: 'later' });
    expect(provider.requests[0]?.messages).toHaveLength(1);
  });

  it('waits delayMs on the clock and rejects with the abort reason during the wait', async () => {
    const sleeps: number[] = [];
    const clock: Clock = {
      now: () => new Date(0),
      sleep: (ms, signal) => {
        sleeps.push(ms);
        return new Promise((_resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason);
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      },
    };
    const provider = createScriptedProvider([{ text: 'late', delayMs: 5_000 }], { clock });
    const controller = new AbortController();
    const deltas: string[] = [];
    const pending = provider.complete(ask('x'), {
      signal: controller.signal,
      onTextDelta: (delta) => deltas.push(delta),
    });
    await waitFor(() => sleeps.length === 1, { what: 'the scripted delay' });
    controller.abort('cancelled');
    await expect(pending).rejects.toBe('cancelled');
    expect(sleeps).toEqual([5_000]);
    expect(deltas).toEqual([]);
  });

  it('really waits with the default clock', async () => {
    const provider = createScriptedProvider([{ text: 'done', delayMs: 30 }]);
    const started = performance.now();
    await provider.complete(ask('x'));
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });
});
