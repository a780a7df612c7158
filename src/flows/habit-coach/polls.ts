import type { Message, Poll } from '../../core/domain.ts';
import { INTENSITIES, type Intensity } from '../../core/profile.ts';
import type { HabitTurnState } from './habit-turn-state.ts';

export const DONE_POLL_QUESTION = 'Did you do it?';
export const DONE_OPTIONS = ['Done', 'Not yet'];
export const INTENSITY_POLL_QUESTION = 'How should your next prompts feel?';

export function donePoll(): Poll {
  return { question: DONE_POLL_QUESTION, options: DONE_OPTIONS };
}

/** Decrease / Keep / Increase, without the move that is impossible at the current level. */
export function intensityPoll(current: Intensity): Poll {
  const options = [current !== 'low' && 'Decrease', 'Keep', current !== 'high' && 'Increase'].filter((option): option is string => Boolean(option));
  return { question: INTENSITY_POLL_QUESTION, options };
}

const SYNONYMS: Record<string, string> = { yes: 'Done', did: 'Done', 'did it': 'Done', no: 'Not yet', less: 'Decrease', lower: 'Decrease', same: 'Keep', more: 'Increase', higher: 'Increase' };

/** Which option a reply picks: by number ("1"), by label ("done", "Increase"), or a synonym. */
export function parsePollAnswer(poll: Poll, reply: string): string | null {
  const text = reply.trim().toLowerCase().replace(/[.!]+$/, '');
  const number = /^\d+$/.test(text) ? Number(text) : NaN;
  if (number >= 1 && number <= poll.options.length) return poll.options[number - 1] ?? null;
  const byLabel = poll.options.find((option) => option.toLowerCase() === text);
  if (byLabel) return byLabel;
  const synonym = SYNONYMS[text];
  return synonym && poll.options.includes(synonym) ? synonym : null;
}

/** The polls the participant may be answering: those sent since their last message, oldest first. */
export function openPolls(history: Message[]): Message[] {
  const lastReply = history.findLastIndex((message) => message.role === 'user');
  return history.slice(lastReply + 1).filter((message) => message.kind === 'poll' && message.poll);
}

/**
 * Applies a poll answer before the model runs: "Done" counts one success per poll, intensity
 * moves one step, clamped. The reply still reaches the model as ordinary text.
 */
export function applyPollAnswer(state: HabitTurnState, history: Message[], reply: string): void {
  for (const pollMessage of openPolls(history)) {
    const answer = parsePollAnswer(pollMessage.poll!, reply);
    if (!answer) continue;
    if (pollMessage.poll!.question === DONE_POLL_QUESTION && answer === 'Done') countSuccess(state, pollMessage.createdAt);
    if (pollMessage.poll!.question === INTENSITY_POLL_QUESTION) moveIntensity(state, answer);
    return;
  }
}

function countSuccess(state: HabitTurnState, pollSentAt: Date): void {
  const counted = state.profile.fieldUpdatedAt.success_count;
  if (counted && counted.getTime() >= pollSentAt.getTime()) return;
  const now = state.startedAt;
  state.profile = {
    ...state.profile,
    successCount: state.profile.successCount + 1,
    fieldUpdatedAt: { ...state.profile.fieldUpdatedAt, success_count: now },
    updatedAt: now,
  };
  state.profileChanged = true;
  state.notes.push('poll: success counted');
}

function moveIntensity(state: HabitTurnState, answer: string): void {
  const step = answer === 'Increase' ? 1 : answer === 'Decrease' ? -1 : 0;
  const index = Math.min(INTENSITIES.length - 1, Math.max(0, INTENSITIES.indexOf(state.profile.intensity) + step));
  const next = INTENSITIES[index]!;
  state.notes.push(`poll: intensity ${state.profile.intensity} → ${next}`);
  if (next === state.profile.intensity) return;
  const now = state.startedAt;
  state.profile = { ...state.profile, intensity: next, fieldUpdatedAt: { ...state.profile.fieldUpdatedAt, intensity: now }, updatedAt: now };
  state.profileChanged = true;
}
