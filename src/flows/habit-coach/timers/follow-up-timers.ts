import { z } from 'zod';
import type { Conversation } from '../../../core/domain.ts';
import { AppError } from '../../../core/errors.ts';
import { emptyProfile } from '../../../core/profile.ts';
import type { StoreTx } from '../../../store/store.ts';
import { defineTimerKind, timerType } from '../../../timers/timer-kinds.ts';
import {
  later,
  repliedSince,
  timerKeys,
  whileActive,
  whileStillActive,
  type HabitTimerDeps,
} from './habit-timer-deps.ts';

export const REMINDER_TEXT = "Friendly check-in: how did today's habit go? Reply whenever you're ready.";
export const FEEDBACK_NUDGE_TEXT = 'How did it go with your habit today? A one-word answer is plenty.';
export const FEEDBACK_FOLLOWUP_TEXT =
  "Just checking in once more about today's habit. Whatever happened, I'd love to hear.";
/** A prompt sent this recently means a newer auto-feedback timer will handle it. */
const RECENT_PROMPT_MS = 4.5 * 60_000;

const afterPrompt = z.object({ promptSentAt: z.iso.datetime().transform((value) => new Date(value)) });

export const REMINDER = timerType('reminder', afterPrompt);
export const AUTO_FEEDBACK = timerType('auto-feedback', afterPrompt);
export const FEEDBACK_NUDGE = timerType(
  'feedback-nudge',
  afterPrompt.extend({ stage: z.enum(['initial', 'followup']) }),
);
export const STATE_TRANSITION = timerType('state-transition', z.object({ target: z.enum(['INTAKE', 'FEEDBACK']) }));

/** The daily reminder: sent once, only if the participant has not replied since the prompt. */
export function reminderTimerKind(deps: HabitTimerDeps) {
  return defineTimerKind({
    ...REMINDER,
    handle: async (timer, { promptSentAt }, context) => {
      await whileActive(deps, timer, async (conversation, participant) => {
        if (await repliedSince(deps.store, conversation.id, promptSentAt)) return;
        await whileStillActive(deps, participant.id, async (tx) => {
          await deps.outgoing.append(tx, { conversation, participant }, [{ text: REMINDER_TEXT, source: 'timer' }], {
            now: deps.clock.now(),
            turnId: null,
          });
          await context.complete(tx); // with its effects: never sent twice
        });
      });
    },
  });
}

/** Moves to FEEDBACK after a prompt, unless already there or a newer prompt was just sent. Sends nothing. */
export function autoFeedbackTimerKind(deps: HabitTimerDeps) {
  return defineTimerKind({
    ...AUTO_FEEDBACK,
    handle: async (timer, { promptSentAt }, context) => {
      await whileActive(deps, timer, async (conversation, participant) => {
        if (conversation.subState === 'FEEDBACK') return;
        const profile = (await deps.store.getProfile(participant.id)) ?? emptyProfile(participant.id, promptSentAt);
        const last = profile.lastPromptSentAt;
        if (
          last &&
          last.getTime() > promptSentAt.getTime() &&
          deps.clock.now().getTime() - last.getTime() < RECENT_PROMPT_MS
        )
          return;
        await whileStillActive(deps, participant.id, async (tx) => {
          await moveSubState(tx, conversation, 'FEEDBACK', deps.clock.now());
          await context.complete(tx);
        });
      });
    },
  });
}

/** Asks how it went (initial nudge, then one follow-up), skipped once the participant replied. */
export function feedbackNudgeTimerKind(deps: HabitTimerDeps) {
  return defineTimerKind({
    ...FEEDBACK_NUDGE,
    handle: async (timer, { promptSentAt, stage }, context) => {
      await whileActive(deps, timer, async (conversation, participant) => {
        if (await repliedSince(deps.store, conversation.id, promptSentAt)) return;
        await whileStillActive(deps, participant.id, async (tx) => {
          const now = deps.clock.now();
          const text = stage === 'initial' ? FEEDBACK_NUDGE_TEXT : FEEDBACK_FOLLOWUP_TEXT;
          await deps.outgoing.append(tx, { conversation, participant }, [{ text, source: 'timer' }], {
            now,
            turnId: null,
          });
          await context.complete(tx);
          if (stage === 'initial' && deps.delays.feedbackFollowupMs > 0) {
            await FEEDBACK_NUDGE.schedule(
              tx,
              { promptSentAt: promptSentAt.toISOString(), stage: 'followup' },
              {
                id: deps.ids.next('tmr'),
                conversationId: conversation.id,
                participantId: participant.id,
                key: timerKeys.feedbackNudge(participant.id),
                dueAt: later(now, deps.delays.feedbackFollowupMs),
                now,
              },
            );
          }
        });
      });
    },
  });
}

/** A delayed `transition_state`: moves the sub-state when it fires. */
export function stateTransitionTimerKind(deps: HabitTimerDeps) {
  return defineTimerKind({
    ...STATE_TRANSITION,
    handle: async (timer, { target }, context) => {
      await whileActive(deps, timer, async (conversation, participant) => {
        await whileStillActive(deps, participant.id, async (tx) => {
          const now = deps.clock.now();
          await moveSubState(tx, conversation, target, now);
          await tx.cancelTimer(timerKeys.autoFeedback(participant.id), now);
          await context.complete(tx);
        });
      });
    },
  });
}

/**
 * Writes the sub-state if the conversation is as the timer read it; otherwise someone wrote first
 * (an operator's forced sub-state): the transaction rolls back and the timer runs again later,
 * reading the conversation afresh.
 */
async function moveSubState(tx: StoreTx, conversation: Conversation, subState: string, now: Date): Promise<void> {
  const updated = await tx.updateConversation(conversation.id, conversation.version, { subState }, now);
  if (!updated)
    throw new AppError('version_conflict', `conversation ${conversation.id} changed while its timer ran`, {
      fault: 'system',
      retryable: true,
    });
}
