import type { Message } from '../../core/domain.ts';
import { numberedOptions, type NumberedOption } from '../../core/poll-numbering.ts';
import { DONE_POLL_QUESTION, pickOption, POLL_OPEN_MS } from './polls.ts';

/**
 * Adherence as the transcript shows it: which poll each reply answered, and how each daily prompt
 * fared. Read the way the coach reads answers (polls.ts) at the time of each reply, so the "done"
 * counted here is the success the coach counted then.
 */

/** A reply that picked an option of a poll. */
export interface PollAnswer {
  poll: Message;
  option: string;
  /** The option's number in the shared numbering (1 Done, 2 Not yet, 3… the intensity poll). */
  number: number;
  answer: Message;
}

/** One daily prompt (its "Did you do it?" poll, sent by the prompt timer) and what became of it. */
export interface PromptOutcome {
  poll: Message;
  /** The prompt's own text, sent just before the poll in the same batch; undefined if not in the transcript. */
  prompt: Message | undefined;
  sentAt: Date;
  /** The participant's first message within 24 h of the prompt and before the next one; null if none. */
  repliedAt: Date | null;
  /** The poll's answer (Done or Not yet); undefined while unanswered. */
  answer: PollAnswer | undefined;
  done: boolean;
}

/**
 * Every poll answer in a transcript (in seq order), replayed one reply at a time: a poll is open
 * for 24 h, a newer poll with the same question replaces it, and a poll is answered once.
 */
export function pollAnswers(messages: readonly Message[]): PollAnswer[] {
  const answers: PollAnswer[] = [];
  let open: Array<{ sentAt: number; options: NumberedOption[] }> = [];
  messages.forEach((message, index) => {
    if (message.kind === 'poll' && message.poll) {
      open = open.filter((entry) => entry.options[0]!.poll.question !== message.poll!.question);
      open.push({ sentAt: message.createdAt.getTime(), options: numberedOptions(batchOf(messages, index), message) });
      return;
    }
    if (message.role !== 'user') return;
    const live = open.filter((entry) => message.createdAt.getTime() - entry.sentAt < POLL_OPEN_MS);
    const picked = pickOption(
      live.flatMap((entry) => entry.options),
      message.text,
    );
    if (!picked) return;
    open = open.filter((entry) => entry.options[0]!.messageId !== picked.messageId);
    const poll = messages.find((candidate) => candidate.id === picked.messageId)!;
    answers.push({ poll, option: picked.option, number: picked.number, answer: message });
  });
  return answers;
}

/** The messages sent in the same batch before `index` (what `numberedOptions` numbers an old poll from). */
function batchOf(messages: readonly Message[], index: number): Message[] {
  const at = messages[index]!.createdAt.getTime();
  let start = index;
  while (start > 0 && messages[start - 1]!.createdAt.getTime() === at) start -= 1;
  return messages.slice(start, index);
}

const isDailyPrompt = (message: Message) =>
  message.kind === 'poll' && message.source === 'timer' && message.poll?.question === DONE_POLL_QUESTION;

/** Each daily prompt of a transcript, oldest first, with its reply and its answer. */
export function promptOutcomes(messages: readonly Message[], answers = pollAnswers(messages)): PromptOutcome[] {
  const byPoll = new Map(answers.map((answer) => [answer.poll.id, answer]));
  const polls = messages.filter(isDailyPrompt);
  return polls.map((poll, index) => {
    const sentAt = poll.createdAt.getTime();
    const until = Math.min(sentAt + POLL_OPEN_MS, polls[index + 1]?.createdAt.getTime() ?? Infinity);
    const reply = messages.find(
      (message) =>
        message.role === 'user' &&
        message.seq > poll.seq &&
        message.createdAt.getTime() >= sentAt &&
        message.createdAt.getTime() < until,
    );
    const answer = byPoll.get(poll.id);
    return {
      poll,
      prompt: promptTextOf(messages, poll),
      sentAt: poll.createdAt,
      repliedAt: reply?.createdAt ?? null,
      answer,
      done: answer?.option === 'Done',
    };
  });
}

function promptTextOf(messages: readonly Message[], poll: Message): Message | undefined {
  const before = messages.findLast((message) => message.seq < poll.seq);
  return before?.kind === 'text' && before.source === 'timer' && before.createdAt.getTime() === poll.createdAt.getTime()
    ? before
    : undefined;
}

/** A prompt still waiting: no reply yet, and under 24 h old. It counts neither as replied nor as missed. */
export const isOpen = (outcome: PromptOutcome, now: Date): boolean =>
  outcome.repliedAt === null && !outcome.answer && now.getTime() - outcome.sentAt.getTime() < POLL_OPEN_MS;

/**
 * The current streak: how many of the latest prompts in a row were answered Done. The latest
 * prompt, while it is still open, neither counts nor breaks it.
 */
export function currentStreak(outcomes: readonly PromptOutcome[], now: Date): number {
  let streak = 0;
  for (let index = outcomes.length - 1; index >= 0; index -= 1) {
    const outcome = outcomes[index]!;
    if (index === outcomes.length - 1 && isOpen(outcome, now)) continue;
    if (!outcome.done) break;
    streak += 1;
  }
  return streak;
}
