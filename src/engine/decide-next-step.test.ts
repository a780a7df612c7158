import { describe, expect, it } from 'vitest';
import { decideNextStep } from './decide-next-step.ts';

const call = { id: 'c1', name: 'save_user_profile', arguments: '{}' };

describe('decideNextStep', () => {
  it('ends the turn on text without tool calls', () => {
    expect(decideNextStep({ text: ' Hello! ', toolCalls: [] }, 0, 10)).toEqual({ kind: 'reply', text: 'Hello!' });
  });

  it('runs tool calls and asks again when there is no text', () => {
    expect(decideNextStep({ text: '', toolCalls: [call] }, 0, 10)).toEqual({ kind: 'run-tools', calls: [call], thenReply: null });
  });

  it('runs tool calls, then replies with the text that came with them', () => {
    expect(decideNextStep({ text: 'Saved!', toolCalls: [call] }, 3, 10)).toEqual({ kind: 'run-tools', calls: [call], thenReply: 'Saved!' });
  });

  it('falls back on an empty response, first round included', () => {
    expect(decideNextStep({ text: '   ', toolCalls: [] }, 0, 10)).toEqual({ kind: 'fallback', reason: 'empty-response' });
  });

  it('falls back when the model still calls tools after the last round', () => {
    expect(decideNextStep({ text: '', toolCalls: [call] }, 10, 10)).toEqual({ kind: 'fallback', reason: 'round-limit' });
    expect(decideNextStep({ text: '', toolCalls: [call] }, 9, 10).kind).toBe('run-tools');
  });
});
