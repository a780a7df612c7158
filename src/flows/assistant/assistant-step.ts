import type { LlmResponse, LlmToolCall } from '../../llm/llm-provider.ts';
import { stripToolMarkers } from './tool-markers.ts';

/** What the assistant's loop does after a model response (spec 003, "Agentic Messages Loop"). */
export type AssistantStep =
  | { kind: 'reply'; text: string }
  | { kind: 'run-tools'; calls: LlmToolCall[] }
  /** Reasoning only: no text, no calls. Ask again. */
  | { kind: 'continue' }
  /** Nothing came back after tool results: ask once for an answer from them. */
  | { kind: 'nudge' }
  | { kind: 'apologize'; reason: 'empty-response' | 'round-limit' };

export interface LoopProgress {
  /** Model calls made so far, this one included. */
  modelCalls: number;
  maxModelCalls: number;
  /** Tool results are already in the messages. */
  sawToolResults: boolean;
  nudged: boolean;
}

export function decideAssistantStep(
  response: Pick<LlmResponse, 'text' | 'toolCalls' | 'reasoning'>,
  progress: LoopProgress,
): AssistantStep {
  const text = stripToolMarkers(response.text);
  const callsLeft = progress.modelCalls < progress.maxModelCalls;
  if (response.toolCalls.length > 0) {
    if (callsLeft) return { kind: 'run-tools', calls: response.toolCalls };
    return text ? { kind: 'reply', text } : { kind: 'apologize', reason: 'round-limit' };
  }
  if (text) return { kind: 'reply', text };
  if (!callsLeft) return { kind: 'apologize', reason: 'round-limit' };
  if (response.reasoning?.trim()) return { kind: 'continue' };
  if (progress.sawToolResults && !progress.nudged) return { kind: 'nudge' };
  return { kind: 'apologize', reason: 'empty-response' };
}
