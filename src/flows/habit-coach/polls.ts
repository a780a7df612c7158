import type { Message, Poll } from '../../core/domain.ts';
import { numberOptions, openPollMessages, type NumberedOption } from '../../core/poll-numbering.ts';
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

/**
 * Which open option a reply picks: by number in the shared numbering of every open poll ("3" is
 * the third option overall), else by label ("done", "Increase") or a synonym, oldest poll first.
 */
export function pickOption(options: readonly NumberedOption[], reply: string): NumberedOption | undefined {
  const text = reply.trim().toLowerCase().replace(/[.!]+$/, '');
  if (/^\d+$/.test(text)) return options.find((option) => option.number === Number(text));
  const label = SYNONYMS[text] ?? text;
  return options.find((option) => option.option.toLowerCase() === label.toLowerCase());
}

/** Which option of a single poll a reply picks, or null. */
export function parsePollAnswer(poll: Poll, reply: string): string | null {
  return pickOption(numberOptions([{ id: 'poll', poll }]), reply)?.option ?? null;
}

/**
 * Applies a poll answer before the model runs: "Done" counts one success per poll, intensity
 * moves one step, clamped. The reply still reaches the model as ordinary text.
 */
export function applyPollAnswer(state: HabitTurnState, history: Message[], reply: string): void {
  const open = openPollMessages(history);
  const picked = pickOption(numberOptions(open.map((message) => ({ id: message.id, poll: message.poll! }))), reply);
  if (!picked) return;
  const pollMessage = open.find((message) => message.id === picked.messageId)!;
  if (picked.poll.question === DONE_POLL_QUESTION && picked.option === 'Done') countSuccess(state, pollMessage.createdAt);
  if (picked.poll.question === INTENSITY_POLL_QUESTION) moveIntensity(state, picked.option);
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
