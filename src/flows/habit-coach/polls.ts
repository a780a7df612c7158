import type { Message, Poll } from '../../core/domain.ts';
import { numberedOptions, type NumberedOption } from '../../core/poll-numbering.ts';
import { INTENSITIES, type Intensity } from '../../core/profile.ts';
import type { HabitTurnState } from './habit-turn-state.ts';

export const DONE_POLL_QUESTION = 'Did you do it?';
export const DONE_OPTIONS = ['Done', 'Not yet'];
export const INTENSITY_POLL_QUESTION = 'How should your next prompts feel?';
/** The Go PromptPipe's options for the same poll: its daily prompts' polls in an imported study (decision 014). */
export const GO_DONE_OPTIONS = ['Done', 'Next time'];

export function donePoll(): Poll {
  return { question: DONE_POLL_QUESTION, options: DONE_OPTIONS };
}

/** Decrease / Keep / Increase, without the move that is impossible at the current level. */
export function intensityPoll(current: Intensity): Poll {
  const options = [current !== 'low' && 'Decrease', 'Keep', current !== 'high' && 'Increase'].filter(
    (option): option is string => Boolean(option),
  );
  return { question: INTENSITY_POLL_QUESTION, options };
}

const SYNONYMS: Record<string, string> = {
  yes: 'Done',
  did: 'Done',
  'did it': 'Done',
  no: 'Not yet',
  less: 'Decrease',
  lower: 'Decrease',
  same: 'Keep',
  more: 'Increase',
  higher: 'Increase',
};

/**
 * A poll vote as the Go PromptPipe recorded it, in its responses and so in an imported transcript:
 * `Q: <question> A: <option>`. Go wrote every vote under "Did you do it?", and one it could not
 * match as `[responded]`, which picks nothing.
 */
const GO_VOTE = /^Q: (.+?) A: (.+)$/s;

/**
 * Which option a reply picks among the open polls: by number (the shared numbering of
 * core/poll-numbering; the newest poll wins if two open polls share a number), else by label
 * ("done", "Increase") or a synonym ("more"); a Go vote by its question and option, as written.
 */
export function pickOption(options: readonly NumberedOption[], reply: string): NumberedOption | undefined {
  const vote = GO_VOTE.exec(reply.trim());
  if (vote) return options.findLast((option) => option.poll.question === vote[1] && option.option === vote[2]);
  const text = normalized(reply);
  if (/^\d+$/.test(text)) return options.findLast((option) => option.number === Number(text));
  const label = (Object.hasOwn(SYNONYMS, text) ? SYNONYMS[text]! : text).toLowerCase();
  return options.find((option) => option.option.toLowerCase() === label);
}

/** Which option of a lone poll a reply picks, or null. */
export function parsePollAnswer(poll: Poll, reply: string): string | null {
  const message: Message = {
    id: 'poll',
    conversationId: '',
    seq: 1,
    role: 'assistant',
    kind: 'poll',
    text: poll.question,
    poll,
    source: 'timer',
    turnId: null,
    createdAt: new Date(0),
  };
  return pickOption(numberedOptions([message], message), reply)?.option ?? null;
}

/** How long a poll waits for its answer: a "yes" days later answers something else. */
export const POLL_OPEN_MS = 24 * 3600_000;

/**
 * The polls still waiting for an answer at `now`, oldest first: the latest poll of each question
 * (a new one replaces an unanswered older one), sent less than a day ago, that no later reply of
 * the person answered. So a "Did you do it?" poll and the intensity poll sent with it can be
 * answered one after the other.
 */
export function openPolls(history: readonly Message[], now: Date): NumberedOption[][] {
  return stillOpen(
    history.map((message): PollStep => {
      if (message.kind === 'poll' && now.getTime() - message.createdAt.getTime() >= POLL_OPEN_MS) return null;
      if (message.kind === 'poll' && message.poll) return { shown: numberedOptions(history, message) };
      return message.role === 'user' ? { reply: message.text } : null;
    }),
  );
}

/** A message as the open-poll rule reads it: a poll shown (its numbered options), a reply, or neither. */
export type PollStep = { shown: NumberedOption[] } | { reply: string } | null;

/**
 * The polls `steps` leave open, oldest first: a poll shown replaces an open one of its question,
 * and a reply that picks an option of an open poll closes that poll.
 */
export function stillOpen(steps: readonly PollStep[]): NumberedOption[][] {
  let open: NumberedOption[][] = [];
  for (const step of steps) {
    if (step && 'shown' in step) {
      const { question } = step.shown[0]!.poll;
      open = open.filter((options) => options[0]!.poll.question !== question);
      open.push(step.shown);
    } else if (step) {
      const picked = pickOption(open.flat(), step.reply);
      if (picked) open = open.filter((options) => options[0]!.messageId !== picked.messageId);
    }
  }
  return open;
}

/** Whether `reply` reads as a pick of some poll's option in `history` (a number, a label, a synonym). */
function couldPick(history: readonly Message[], reply: string): boolean {
  if (GO_VOTE.test(reply.trim())) return true;
  const text = normalized(reply);
  if (/^\d+$/.test(text) || Object.hasOwn(SYNONYMS, text)) return true;
  return history.some((message) => message.poll?.options.some((option) => option.toLowerCase() === text));
}

const normalized = (reply: string) =>
  reply
    .trim()
    .toLowerCase()
    .replace(/[.!]+$/, '');

/**
 * Applies a poll answer before the model runs: "Done" counts one success per poll, intensity
 * moves one step, clamped. The reply still reaches the model as ordinary text. `history` is the
 * transcript before this reply.
 */
export function applyPollAnswer(state: HabitTurnState, history: readonly Message[], reply: string): void {
  // Most replies are not a pick at all: the history's polls are replayed only for one that could be.
  if (!couldPick(history, reply)) return;
  const picked = pickOption(openPolls(history, state.startedAt).flat(), reply);
  if (!picked) return;
  const pollMessage = history.find((message) => message.id === picked.messageId)!;
  if (picked.poll.question === DONE_POLL_QUESTION && picked.option === 'Done')
    countSuccess(state, pollMessage.createdAt);
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

/** The intensity an answer to the intensity poll leads to: one step, clamped. */
export function nextIntensity(current: Intensity, answer: string): Intensity {
  const step = answer === 'Increase' ? 1 : answer === 'Decrease' ? -1 : 0;
  const index = Math.min(INTENSITIES.length - 1, Math.max(0, INTENSITIES.indexOf(current) + step));
  return INTENSITIES[index]!;
}

function moveIntensity(state: HabitTurnState, answer: string): void {
  const next = nextIntensity(state.profile.intensity, answer);
  state.notes.push(`poll: intensity ${state.profile.intensity} → ${next}`);
  if (next === state.profile.intensity) return;
  const now = state.startedAt;
  state.profile = {
    ...state.profile,
    intensity: next,
    fieldUpdatedAt: { ...state.profile.fieldUpdatedAt, intensity: now },
    updatedAt: now,
  };
  state.profileChanged = true;
}
