import { describe, expect, it } from 'vitest';
import type { LlmMessage } from '../../llm/llm-provider.ts';
import { offlineAssistantStep } from './offline-policy.ts';

const tools = ['calculator', 'current_time', 'add_note', 'list_notes'].map((name) => ({
  name,
  description: name,
  parameters: {},
}));
const reply = (...messages: LlmMessage[]) =>
  offlineAssistantStep({ messages: [{ role: 'system', content: '[assistant:reply] You help.' }, ...messages], tools })!;

describe('offline assistant policy', () => {
  it.each([
    ['what is 12 * 7?', '12 * 7'],
    ['what is 1,250 * 12.', '1,250 * 12'],
    ['1e3 / 4', '1e3 / 4'],
    ['(2+3)*4', '(2+3)*4'],
    ['10 - 3', '10 - 3'],
  ])('calls the calculator for %j', (said, expression) => {
    expect(reply({ role: 'user', content: said }).toolCalls).toEqual([
      { name: 'calculator', arguments: { expression } },
    ]);
  });

  it.each([['415-555-0100, ZIP 94107'], ['see you on 2026-11-23']])('takes %j for no sum', (said) => {
    expect(reply({ role: 'user', content: said }).toolCalls).toEqual([]);
  });

  it('owns up to a failed tool without showing its raw error', () => {
    const step = reply(
      { role: 'user', content: 'what is 1e308 * 10' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'calculator', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c1', content: 'Error: the result is not a finite number' },
    );
    expect(step.text).not.toContain('Error:');
    expect(step.text).toMatch(/couldn't/);
  });
});
