import { describe, expect, it } from 'vitest';
import { decideAssistantStep, type LoopProgress } from './assistant-step.ts';

const progress = (patch: Partial<LoopProgress> = {}): LoopProgress => ({
  modelCalls: 1,
  maxModelCalls: 8,
  sawToolResults: false,
  nudged: false,
  ...patch,
});
const call = { id: 'c1', name: 'calculator', arguments: '{}' };

describe('decideAssistantStep', () => {
  it('runs every tool call of a response', () => {
    const calls = [call, { ...call, id: 'c2' }];
    expect(decideAssistantStep({ text: 'let me check', toolCalls: calls }, progress())).toEqual({
      kind: 'run-tools',
      calls,
    });
  });

  it('replies with text', () => {
    expect(decideAssistantStep({ text: ' Hello ', toolCalls: [] }, progress())).toEqual({
      kind: 'reply',
      text: 'Hello',
    });
  });

  it('continues after reasoning alone', () => {
    expect(decideAssistantStep({ text: '', toolCalls: [], reasoning: 'hmm' }, progress())).toEqual({
      kind: 'continue',
    });
  });

  it('nudges once after tool results, then apologizes', () => {
    expect(decideAssistantStep({ text: '', toolCalls: [] }, progress({ sawToolResults: true }))).toEqual({
      kind: 'nudge',
    });
    expect(decideAssistantStep({ text: '', toolCalls: [] }, progress({ sawToolResults: true, nudged: true }))).toEqual({
      kind: 'apologize',
      reason: 'empty-response',
    });
    expect(decideAssistantStep({ text: '  ', toolCalls: [] }, progress())).toEqual({
      kind: 'apologize',
      reason: 'empty-response',
    });
  });

  it('stops at the cap: tools are not run when no call is left to read their results', () => {
    const last = progress({ modelCalls: 8 });
    expect(decideAssistantStep({ text: '', toolCalls: [call] }, last)).toEqual({
      kind: 'apologize',
      reason: 'round-limit',
    });
    expect(decideAssistantStep({ text: 'partial answer', toolCalls: [call] }, last)).toEqual({
      kind: 'reply',
      text: 'partial answer',
    });
    expect(decideAssistantStep({ text: '', toolCalls: [], reasoning: 'hmm' }, last)).toEqual({
      kind: 'apologize',
      reason: 'round-limit',
    });
  });

  it('a reply made only of tool-protocol lines is empty', () => {
    expect(decideAssistantStep({ text: 'TOOL: calculator {"x":1}', toolCalls: [] }, progress())).toEqual({
      kind: 'apologize',
      reason: 'empty-response',
    });
  });
});
