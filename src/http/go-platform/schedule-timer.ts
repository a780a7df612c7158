import type { Logger } from 'pino';
import { z } from 'zod';
import type { Clock, IdGenerator } from '../../core/clock.ts';
import type { NewTimer, Timer } from '../../core/timer.ts';
import type { Outgoing } from '../../engine/outgoing.ts';
import type { LlmProvider } from '../../llm/llm-provider.ts';
import type { Store, StoreTx } from '../../store/store.ts';
import { defineTimerKind, timerType } from '../../timers/timer-kinds.ts';
import { composePrompt } from './compose-prompt.ts';
import type { CustomGenerator } from './custom-generator.ts';
import { nextRun } from './go-schedule.ts';
import { goPromptBody, goScheduleSchema } from './go-schemas.ts';

/** One pending timer per schedule: its id is the schedule's, whichever row is next. */
export const goScheduleKey = (scheduleId: string) => `go-schedule:${scheduleId}`;

export const goSchedulePayload = z.object({
  scheduleId: z.string(),
  /** When `POST /schedule` created it (ISO 8601). */
  createdAt: z.string(),
  /** The zone its fields are read in: the schedule's, else the participant's, else UTC. */
  zone: z.string(),
  schedule: goScheduleSchema,
  prompt: goPromptBody.omit({ to: true, schedule: true }),
});
export type GoSchedulePayload = z.output<typeof goSchedulePayload>;
export const GO_SCHEDULE = timerType('go-schedule', goSchedulePayload);

export interface GoScheduleDeps {
  store: Store;
  ids: IdGenerator;
  outgoing: Outgoing;
  clock: Clock;
  logger: Logger;
  provider: LlmProvider;
  customGenerator?: CustomGenerator | undefined;
}

/**
 * The timer row of a schedule's next send, or null when its fields match no date after `after`.
 * It belongs to the conversation, not the participant: a pause cancels every timer of a
 * participant's, and a series outlives a pause (its sends are skipped meanwhile).
 */
export function goScheduleTimer(
  payload: GoSchedulePayload,
  conversationId: string,
  after: Date,
  ids: IdGenerator,
): NewTimer | null {
  const dueAt = nextRun(payload.schedule, payload.zone, after);
  if (!dueAt) return null;
  return GO_SCHEDULE.row(payload, {
    id: ids.next('tmr'),
    conversationId,
    participantId: null,
    key: goScheduleKey(payload.scheduleId),
    dueAt,
    now: after,
  });
}

/**
 * Whether this firing's row is still the one running: `DELETE /timers/{id}` cancels a row claimed
 * and not yet fired (decision 014); then the firing neither sends nor arms the next.
 */
async function stillRunning(ops: Pick<StoreTx, 'getTimer'>, timer: Timer): Promise<boolean> {
  return (await ops.getTimer(timer.id))?.status === 'running';
}

async function armNext(tx: StoreTx, deps: GoScheduleDeps, timer: NewTimer, payload: GoSchedulePayload, now: Date) {
  const after = new Date(Math.max(now.getTime(), timer.dueAt.getTime()));
  const next = goScheduleTimer(payload, timer.conversationId, after, deps.ids);
  if (next) await tx.scheduleTimer(next);
}

/**
 * Whether this firing sends: to an active participant, and a custom prompt only while a generator
 * is configured (a restart without PLATFORM_CUSTOM_GENERATOR skips its sends, the series goes on).
 */
function sends(payload: GoSchedulePayload, status: string, deps: GoScheduleDeps): boolean {
  if (status !== 'active') return false;
  if (payload.prompt.type !== 'custom' || deps.customGenerator) return true;
  deps.logger.warn(
    { scheduleId: payload.scheduleId },
    'a custom POST /schedule send is skipped: PLATFORM_CUSTOM_GENERATOR is not set',
  );
  return false;
}

/**
 * A `POST /schedule` send: the prompt (generated for genai and custom) goes out through the outbox to an
 * active participant (Go kept sending to paused and finished people: not imported), and the
 * next occurrence is armed, in one transaction with the timer's completion.
 */
export function goScheduleTimerKind(deps: GoScheduleDeps) {
  return defineTimerKind({
    ...GO_SCHEDULE,
    handle: async (timer, payload, context) => {
      const conversation = await deps.store.getConversation(timer.conversationId);
      const participant = conversation?.participantId && (await deps.store.getParticipant(conversation.participantId));
      if (!conversation || !participant || !(await stillRunning(deps.store, timer))) return;
      const drafts = sends(payload, participant.status, deps)
        ? await composePrompt(payload.prompt, {
            provider: deps.provider,
            source: 'schedule', // not a daily prompt of the study
            signal: context.signal,
            custom: {
              generator: deps.customGenerator,
              to: participant.phoneNumber,
              context: { participantId: participant.id, scheduleId: payload.scheduleId, now: deps.clock.now() },
            },
          })
        : [];
      await deps.store.transaction(async (tx) => {
        if (!(await stillRunning(tx, timer))) return; // cancelled while its text was being written
        const now = deps.clock.now();
        const current = await tx.lockParticipant(participant.id);
        if (drafts.length > 0 && current?.status === 'active')
          await deps.outgoing.append(tx, { conversation, participant: current }, drafts, { now, turnId: null });
        await armNext(tx, deps, timer, payload, now);
        await context.complete(tx); // with its effects: a process that dies after this never re-runs it
      });
    },
    // This send is lost after its retries (the model was down); the series is not.
    giveUp: async (timer, payload) => {
      await deps.store.transaction(async (tx) => {
        if (await stillRunning(tx, timer)) await armNext(tx, deps, timer, payload, deps.clock.now());
      });
    },
  });
}
