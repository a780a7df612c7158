import type { Message } from '../core/domain.ts';
import type { LlmMessage } from '../llm/llm-provider.ts';
import type { TurnInput } from './flow.ts';

/** Messages the flow works with; older ones stay in the transcript only. */
export const HISTORY_WINDOW = 50;

/**
 * The model's view of a turn: system messages, the last `historyLimit` transcript messages
 * (participant and assistant only; a poll reads as its question with numbered options),
 * then the current input — never twice.
 */
export function buildModelMessages(
  systemMessages: LlmMessage[],
  history: readonly Message[],
  input: TurnInput,
  historyLimit: number,
): LlmMessage[] {
  const window = historyLimit <= 0 ? [] : history.slice(-Math.min(historyLimit, HISTORY_WINDOW));
  const transcript = window.flatMap((message): LlmMessage[] => {
    if (message.role === 'system') return [];
    const content =
      message.kind === 'poll' && message.poll
        ? pollForModel(message.text, message.poll.options, message.poll.firstNumber)
        : message.text;
    return [{ role: message.role, content }];
  });
  const current = input.kind === 'message' ? input.text : input.hint;
  return [...systemMessages, ...transcript, { role: 'user', content: current }];
}

/** A poll as the model reads it, numbered as the person saw it (core/poll-numbering). */
export function pollForModel(question: string, options: string[], firstNumber = 1): string {
  return [question, ...options.map((option, index) => `${firstNumber + index}. ${option}`)].join('\n');
}
