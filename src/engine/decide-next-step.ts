import type { LlmResponse, LlmToolCall } from '../llm/llm-provider.ts';

/**
 * What the tool loop does after a model response (BEHAVIOR-NOTES "Tool loop"):
 * text alone ends the turn; tool calls run, then `afterTools` says what ends or continues the
 * turn; nothing at all, or no rounds left, falls back.
 */
export type NextStep =
  | { kind: 'reply'; text: string }
  | { kind: 'run-tools'; calls: LlmToolCall[]; afterTools: AfterTools }
  | { kind: 'fallback'; reason: 'empty-response' | 'round-limit' };

/**
 * Once a round's tools ran: reply with the text that came with the calls, ask the model again,
 * or, when that was the last round, end with the fallback reply (no model call beyond the cap).
 */
export type AfterTools =
  { kind: 'reply'; text: string } | { kind: 'call-model' } | { kind: 'fallback'; reason: 'round-limit' };

/** `roundsRun`: tool rounds already run this turn; at most `maxRounds` run in all. */
export function decideNextStep(
  response: Pick<LlmResponse, 'text' | 'toolCalls'>,
  roundsRun: number,
  maxRounds: number,
): NextStep {
  const text = response.text.trim();
  if (response.toolCalls.length === 0) {
    return text === '' ? { kind: 'fallback', reason: 'empty-response' } : { kind: 'reply', text };
  }
  if (roundsRun >= maxRounds) return { kind: 'fallback', reason: 'round-limit' };
  return { kind: 'run-tools', calls: response.toolCalls, afterTools: afterTools(text, roundsRun + 1 >= maxRounds) };
}

function afterTools(text: string, lastRound: boolean): AfterTools {
  if (text !== '') return { kind: 'reply', text };
  return lastRound ? { kind: 'fallback', reason: 'round-limit' } : { kind: 'call-model' };
}
