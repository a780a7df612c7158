import type { Message, Poll } from './domain.ts';

/**
 * The one numbering of poll options that renderers and answer parsers share: numbers run across
 * the polls sent together (one batch, one instant), so a "Did you do it?" poll (1 Done, 2 Not yet)
 * sent with an intensity poll gives the latter 3, 4 and 5. The numbers of a poll never change
 * afterwards, whatever is answered first.
 */
export interface NumberedOption {
  /** The message that carried the poll. */
  messageId: string;
  poll: Poll;
  option: string;
  number: number;
}

/** The first option number of each entry of one batch (entries without a poll get none). */
export function firstNumbersOfBatch(batch: ReadonlyArray<{ poll: Poll | null }>): Array<number | null> {
  let next = 1;
  return batch.map(({ poll }) => {
    if (!poll) return null;
    const first = next;
    next += poll.options.length;
    return first;
  });
}

/**
 * The numbered options of `pollMessage`: from the number recorded when it was queued, else (polls
 * stored before that) from the rest of its batch in `history`.
 */
export function numberedOptions(history: readonly Message[], pollMessage: Message): NumberedOption[] {
  const batch = history.filter(
    (message) =>
      message.poll && message.createdAt.getTime() === pollMessage.createdAt.getTime() && message.seq < pollMessage.seq,
  );
  const first =
    pollMessage.poll!.firstNumber ?? 1 + batch.reduce((sum, message) => sum + message.poll!.options.length, 0);
  return pollMessage.poll!.options.map((option, index) => ({
    messageId: pollMessage.id,
    poll: pollMessage.poll!,
    option,
    number: first + index,
  }));
}

/** A poll as plain text for a channel without native polls: the question, then numbered options. */
export function pollForChannel(poll: Poll, firstNumber: number): string {
  const lines = poll.options.map((option, index) => `${firstNumber + index}. ${option}`);
  return [poll.question, ...lines, 'Reply with a number or the answer.'].join('\n');
}
