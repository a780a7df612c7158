import type { Outgoing } from '../../../engine/outgoing.ts';
import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '../../../core/clock.ts';
import type { Conversation, Participant } from '../../../core/domain.ts';
import type { Timer } from '../../../core/timer.ts';
import type { LlmProvider } from '../../../llm/llm-provider.ts';
import type { Store, StoreTx } from '../../../store/store.ts';

/** Delays of the habit flow's timers, in ms; 0 disables that timer. */
export interface HabitDelays {
  reminderMs: number;
  autoFeedbackMs: number;
  feedbackInitialMs: number;
  feedbackFollowupMs: number;
}

export interface HabitTimerDeps {
  store: Store;
  ids: IdGenerator;
  outgoing: Outgoing;
  clock: Clock;
  logger: Logger;
  provider: LlmProvider;
  generatorPrompt: string;
  random: () => number;
  delays: HabitDelays;
}

/** Dedup keys: one pending timer of each kind per participant (per schedule for daily prompts). */
export const timerKeys = {
  dailyPrompt: (scheduleId: string) => `daily-prompt:${scheduleId}`,
  reminder: (participantId: string) => `reminder:${participantId}`,
  autoFeedback: (participantId: string) => `auto-feedback:${participantId}`,
  feedbackNudge: (participantId: string) => `feedback-nudge:${participantId}`,
  stateTransition: (participantId: string) => `state-transition:${participantId}`,
};

/**
 * Runs a timer's work after re-checking at fire time that the conversation exists and its
 * participant is still active. Returns false when it skipped. (The worker already runs the
 * firing in the conversation's queue.)
 */
export async function whileActive(
  deps: HabitTimerDeps,
  timer: Timer,
  work: (conversation: Conversation, participant: Participant) => Promise<void>,
): Promise<boolean> {
  const conversation = await deps.store.getConversation(timer.conversationId);
  const participant = conversation?.participantId
    ? await deps.store.getParticipant(conversation.participantId)
    : undefined;
  if (!conversation || !participant || participant.status !== 'active') return false;
  await work(conversation, participant);
  return true;
}

/**
 * A timer's effects, committed only if the participant is still active at commit time (a pause
 * may land while the timer's work, a prompt generation say, was running).
 */
export function whileStillActive(
  deps: HabitTimerDeps,
  participantId: string,
  work: (tx: StoreTx) => Promise<void>,
): Promise<void> {
  return deps.store.transaction(async (tx) => {
    if ((await tx.lockParticipant(participantId))?.status === 'active') await work(tx);
  });
}

/** True when the participant wrote anything after `since`. */
export async function repliedSince(store: Store, conversationId: string, since: Date): Promise<boolean> {
  const recent = await store.listMessages(conversationId, { limit: 50, withoutSystem: true });
  return recent.some((message) => message.role === 'user' && message.createdAt.getTime() > since.getTime());
}

export function later(now: Date, ms: number): Date {
  return new Date(now.getTime() + ms);
}
