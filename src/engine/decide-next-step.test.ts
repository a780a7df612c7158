import { describe, expect, it } from 'vitest';
import { decideNextStep } from './decide-next-step.ts';

const call = { id: 'c1', name: 'save_user_profile', arguments: '{}' };

describe('decideNextStep', () => {
  it('ends the turn on text without tool calls', () => {
    expect(decideNextStep({ text: ' Hello! ', toolCalls: [] }, 0, 10)).toEqual({ kind: 'reply', text: 'Hello!' });
  });

  it('runs tool calls and asks again when there is no text', () => {
    expect(decideNextStep({ text: '', toolCalls: [call] }, 0, 10)).toEqual({
      kind: 'run-tools',
      calls: [call],
      afterTools: { kind: 'call-model' },
    });
  });

  it('runs tool calls, then replies with the text that came with them', () => {
    expect(decideNextStep({ text: 'Saved!', toolCalls: [call] }, 3, 10)).toEqual({
      kind: 'run-tools',
      calls: [call],
      afterTools: { kind: 'reply', text: 'Saved!' },
    });
  });

  it('falls back on an empty response, first round included', () => {
    expect(decideNextStep({ text: '   ', toolCalls: [] }, 0, 10)).toEqual({
      kind: 'fallback',
      reason: 'empty-response',
    });
  });

  it("runs the last round's tools, then falls back instead of asking the model again", () => {
    expect(decideNextStep({ text: '', toolCalls: [call] }, 9, 10)).toEqual({
      kind: 'run-tools',
      calls: [call],
      afterTools: { kind: 'fallback', reason: 'round-limit' },
    });
    expect(decideNextStep({ text: '', toolCalls: [call] }, 8, 10)).toMatchObject({
      afterTools: { kind: 'call-model' },
    });
  });

  it('on the last round, text that came with the tool calls is still the reply', () => {
    expect(decideNextStep({ text: 'Saved!', toolCalls: [call] }, 9, 10)).toMatchObject({
      afterTools: { kind: 'reply', text: 'Saved!' },
    });
  });

  it('runs nothing when no rounds are left', () => {
    expect(decideNextStep({ text: 'Saved!', toolCalls: [call] }, 10, 10)).toEqual({
      kind: 'fallback',
      reason: 'round-limit',
    });
  });
});
