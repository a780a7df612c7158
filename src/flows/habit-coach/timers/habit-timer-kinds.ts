import type { TimerKind } from '../../../timers/timer-kinds.ts';
import { dailyPromptTimerKind } from './daily-prompt-timer.ts';
import {
  autoFeedbackTimerKind,
  feedbackNudgeTimerKind,
  reminderTimerKind,
  stateTransitionTimerKind,
} from './follow-up-timers.ts';
import type { HabitTimerDeps } from './habit-timer-deps.ts';

/** Every timer kind of the habit flow, for the server's registry. */
export function habitTimerKinds(deps: HabitTimerDeps): Array<TimerKind<never>> {
  return [
    dailyPromptTimerKind(deps),
    reminderTimerKind(deps),
    autoFeedbackTimerKind(deps),
    feedbackNudgeTimerKind(deps),
    stateTransitionTimerKind(deps),
  ] as Array<TimerKind<never>>;
}
