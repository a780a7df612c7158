import type { Participant } from '../../core/domain.ts';
import { PROFILE_TEXT_FIELDS, type Profile, type ProfileTextField } from '../../core/profile.ts';
import type { Schedule } from '../../core/schedule.ts';

export type SubState = 'INTAKE' | 'FEEDBACK';

export interface DelayedTransition {
  target: SubState;
  dueAt: Date;
}

/**
 * The habit flow's working state for one turn. Tools read and change it; nothing is written to
 * the store until the turn commits, so a later tool sees an earlier one's change.
 */
export interface HabitTurnState {
  readonly participant: Participant;
  readonly startedAt: Date;
  profile: Profile;
  profileChanged: boolean;
  subState: SubState;
  subStateChanged: boolean;
  /** An immediate transition ran this turn, even to the current sub-state: it still cancels auto-feedback. */
  subStateWritten: boolean;
  schedules: Schedule[];
  createdSchedules: Schedule[];
  deletedScheduleIds: string[];
  /**
   * Schedule id → when its next prompt goes out: its pending timer's due time, or, for a schedule
   * created this turn, the time its timer is armed for at commit. The scheduler tool tells the
   * model these times, so a random window is drawn once, not once for the model and once for the timer.
   */
  nextPromptAt: Map<string, Date>;
  /**
   * Dedup keys of the participant's timers pending when the turn began. Nothing arms one of
   * theirs while the turn runs (timer handlers take turns with it), so a cancellation of a key
   * not here has nothing to do.
   */
  pendingTimerKeys: ReadonlySet<string>;
  /** Undefined: untouched; null: cancel any pending one; a value: replace the pending one. */
  delayedTransition: DelayedTransition | null | undefined;
  /** One line per tool effect, for debug mode. */
  notes: string[];
}

export const REQUIRED_FOR_PROMPT: ProfileTextField[] = ['prompt_anchor', 'preferred_time'];
export const INTAKE_FIELDS: ProfileTextField[] = [
  'habit_domain',
  'motivational_frame',
  'preferred_time',
  'prompt_anchor',
];

export function missingFields(
  profile: Profile,
  fields: readonly ProfileTextField[] = INTAKE_FIELDS,
): ProfileTextField[] {
  return fields.filter((field) => !profile.fields[field]?.trim());
}

/** Writes the sub-state now; any write of the sub-state cancels a pending delayed transition and auto-feedback. */
export function setSubState(state: HabitTurnState, target: SubState): void {
  if (state.subState !== target) {
    state.subState = target;
    state.subStateChanged = true;
  }
  state.subStateWritten = true;
  state.delayedTransition = null;
}

/** The profile as the model reads it: known fields and what is still missing. */
export function describeProfile(profile: Profile): string {
  const known = PROFILE_TEXT_FIELDS.filter((field) => profile.fields[field]).map(
    (field) => `- ${field}: ${profile.fields[field]}`,
  );
  const missing = missingFields(profile);
  return [
    known.length > 0 ? `Known profile fields:\n${known.join('\n')}` : 'Known profile fields: none yet.',
    missing.length > 0 ? `Still missing: ${missing.join(', ')}.` : 'The intake profile is complete.',
    `Intensity: ${profile.intensity}. Prompts sent: ${profile.totalPrompts}. Successes: ${profile.successCount}.`,
  ].join('\n');
}
