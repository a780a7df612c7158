import type { Message, Poll } from './domain.ts';

/**
 * The one numbering of poll options that renderers and answer parsers share: every poll sent
 * since the person's last message is open, and their options are numbered consecutively, oldest
 * poll first. A "Did you do it?" poll (1 Done, 2 Not yet) followed by an intensity poll gives the
 * latter 3, 4 and 5, so a bare number never means two things.
 */
export interface NumberedOption {
  /** The message that carried the poll. */
  messageId: string;
  poll: Poll;
  option: string;
  /** From 1, across every open poll. */
  number: number;
}

/** The polls of `history` (oldest first) sent after the last message of the person. */
export function openPollMessages(history: readonly Message[]): Message[] {
  const lastReply = history.findLastIndex((message) => message.role === 'user');
  return history.slice(lastReply + 1).filter((message) => message.kind === 'poll' && message.poll !== null);
}

export function numberOptions(polls: ReadonlyArray<{ id: string; poll: Poll }>): NumberedOption[] {
  const numbered: NumberedOption[] = [];
  for (const { id, poll } of polls) {
    for (const option of poll.options) numbered.push({ messageId: id, poll, option, number: numbered.length + 1 });
  }
  return numbered;
}

/** A poll as plain text for a channel without native polls: the question, then numbered options. */
export function pollAsText(poll: Poll, firstNumber: number): string {
  const lines = poll.options.map((option, index) => `${firstNumber + index}. ${option}`);
  return [poll.question, ...lines, 'Reply with a number or the answer.'].join('\n');
}
