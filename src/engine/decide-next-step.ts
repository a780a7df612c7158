import type { LlmResponse, LlmToolCall } from '../llm/llm-provider.ts';

/**
 * What the tool loop does after a model response (BEHAVIOR-NOTES "Tool loop"):
 * text alone ends the turn; tool calls run, then either the model is asked again or, when the
 * response also had text, that text is the reply; nothing at all, or no rounds left, falls back.
 */
export type NextStep =
  | { kind: 'reply'; text: string }
  | { kind: 'run-tools'; calls: LlmToolCall[]; thenReply: string | null }
  | { kind: 'fallback'; reason: 'empty-response' | 'round-limit' };

export function decideNextStep(response: Pick<LlmResponse, 'text' | 'toolCalls'>, roundsRun: number, maxRounds: number): NextStep {
  const text = response.text.trim();
  if (response.toolCalls.length === 0) {
    return text === '' ? { kind: 'fallback', reason: 'empty-response' } : { kind: 'reply', text };
  }
  if (roundsRun >= maxRounds) return { kind: 'fallback', reason: 'round-limit' };
  return { kind: 'run-tools', calls: response.toolCalls, thenReply: text === '' ? null : text };
}
