import { z } from 'zod';
import type { Participant } from '../../../core/domain.ts';
import { emptyProfile, type Profile } from '../../../core/profile.ts';
import type { Schedule } from '../../../core/schedule.ts';
import type { NewTimer } from '../../../core/timer.ts';
import { isModelUnavailable } from '../../../core/errors.ts';
import type { OutgoingDraft } from '../../../engine/outgoing.ts';
import type { StoreTx } from '../../../store/store.ts';
import { localDate, nextFireTime } from '../../../timers/schedule-math.ts';
import { defineTimerKind, timerType, type TimerUsage } from '../../../timers/timer-kinds.ts';
import { AUTO_FEEDBACK, FEEDBACK_NUDGE, REMINDER } from './follow-up-timers.ts';
import { donePoll, intensityPoll } from '../polls.ts';
import { promptGeneratorMessages } from '../tools/generate-habit-prompt.ts';
import { later, timerKeys, whileActive, whileStillActive, type HabitTimerDeps } from './habit-timer-deps.ts';

/** `dueAt`: the time it is meant for (a retry moves the row's due time, not how late the prompt may be). */
export const DAILY_PROMPT = timerType(
  'daily-prompt',
  z.object({ scheduleId: z.string(), dueAt: z.iso.datetime().optional() }),
);
export const FALLBACK_PROMPT = "It's time for your daily habit. A small step today counts!";
/**
 * How late a prompt may go out because its generation waits for the model (an outage): until
 * then it is retried, and the try that would end later sends the last good prompt instead.
 */
export const PROMPT_LATEST_MS = 30 * 60_000;
/**
 * How late a prompt may still go out at all: one found due later than this (the server was down
 * for hours) would reach the participant at a time they did not choose, at night perhaps. It is
 * skipped, said in the log, and the schedule's next prompt is armed.
 */
export const PROMPT_STALE_MS = 2 * 60 * 60_000;

/** The timer row that fires a schedule's next prompt after `after` (a new draw for a random window). */
export function dailyPromptTimer(
  schedule: Schedule,
  conversationId: string,
  after: Date,
  deps: Pick<HabitTimerDeps, 'ids' | 'random'>,
  notOnDayOf?: Date,
): NewTimer {
  return dailyPromptTimerDueAt(
    schedule,
    conversationId,
    nextFireTime(schedule, after, deps.random, notOnDayOf),
    after,
    deps,
  );
}

/** The timer row that fires a schedule's prompt at a time already chosen. */
export function dailyPromptTimerDueAt(
  schedule: Schedule,
  conversationId: string,
  dueAt: Date,
  createdAt: Date,
  deps: Pick<HabitTimerDeps, 'ids'>,
): NewTimer {
  return DAILY_PROMPT.row(
    { scheduleId: schedule.id, dueAt: dueAt.toISOString() },
    {
      id: deps.ids.next('tmr'),
      conversationId,
      participantId: schedule.participantId,
      key: timerKeys.dailyPrompt(schedule.id),
      dueAt,
      now: createdAt,
    },
  );
}

/**
 * A scheduled prompt: generate it (while the model is down, wait for it up to `PROMPT_LATEST_MS`;
 * otherwise, or after that, the last good prompt), send it with a "did you do
 * it?" poll (and the intensity poll once per local day), arm the reminder, auto-feedback and
 * feedback nudge, and re-arm the schedule, all in one transaction.
 */
export function dailyPromptTimerKind(deps: HabitTimerDeps) {
  return defineTimerKind({
    ...DAILY_PROMPT,
    // Retries 5 s, 10 s … 10 min apart: enough tries to reach PROMPT_LATEST_MS through an outage.
    maxAttempts: 10,
    handle: async (timer, { scheduleId, dueAt }, context) => {
      await whileActive(deps, timer, async (conversation, participant) => {
        const schedule = (await deps.store.listSchedules(participant.id)).find(
          (candidate) => candidate.id === scheduleId,
        );
        if (!schedule) return;
        const meantFor = dueAt ? Date.parse(dueAt) : timer.dueAt.getTime(); // rows armed before 2026-11-25 lack it
        if (deps.clock.now().getTime() > meantFor + PROMPT_STALE_MS) {
          deps.logger.warn(
            { timerId: timer.id, participantId: participant.id, meantFor: new Date(meantFor).toISOString() },
            'daily prompt skipped: found due hours late; the next one is armed',
          );
          await whileStillActive(deps, participant.id, async (tx) => {
            const current = (await tx.listSchedules(participant.id)).find((candidate) => candidate.id === scheduleId);
            if (current) await tx.scheduleTimer(dailyPromptTimer(current, conversation.id, deps.clock.now(), deps));
            await context.complete(tx);
          });
          return;
        }
        const profile = (await deps.store.getProfile(participant.id)) ?? emptyProfile(participant.id, context.now);
        const waitForModel = context.retryAt !== null && context.retryAt.getTime() <= meantFor + PROMPT_LATEST_MS;
        const prompt = await generatePrompt(deps, participant, profile, { signal: context.signal, waitForModel });
        await whileStillActive(deps, participant.id, async (tx) => {
          // Read again: the schedule may have moved zone (or gone) while the prompt was written.
          const current = (await tx.listSchedules(participant.id)).find((candidate) => candidate.id === scheduleId);
          if (!current) return;
          const now = deps.clock.now();
          // "Once per day" is the participant's local day, whatever zone the schedule is pinned to.
          const zone = participant.timezone ?? current.timezone;
          const pollToday =
            !profile.fieldUpdatedAt.intensity_poll ||
            localDate(profile.fieldUpdatedAt.intensity_poll, zone) !== localDate(now, zone);
          const drafts: OutgoingDraft[] = [
            { text: prompt.text, source: 'timer' },
            { text: donePoll().question, kind: 'poll', poll: donePoll(), source: 'timer' },
          ];
          if (pollToday)
            drafts.push({
              text: intensityPoll(profile.intensity).question,
              kind: 'poll',
              poll: intensityPoll(profile.intensity),
              source: 'timer',
            });
          await deps.outgoing.append(tx, { conversation, participant }, drafts, { now, turnId: null });
          await tx.saveProfile(afterPrompt(profile, prompt, now, pollToday));
          await armFollowUps(tx, deps, participant, conversation.id, now);
          await tx.scheduleTimer(dailyPromptTimer(current, conversation.id, now, deps, timer.dueAt));
          await context.complete(tx, prompt.usage); // with its effects: a process that dies after this never re-runs it
        });
      });
    },
    // This prompt is lost after its retries; the schedule is not: its next occurrence is armed.
    giveUp: async (timer, { scheduleId }) => {
      await whileActive(deps, timer, async (conversation, participant) => {
        const schedule = (await deps.store.listSchedules(participant.id)).find(
          (candidate) => candidate.id === scheduleId,
        );
        if (schedule)
          await deps.store.scheduleTimer(
            dailyPromptTimer(schedule, conversation.id, deps.clock.now(), deps, timer.dueAt),
          );
      });
    },
  });
}

async function generatePrompt(
  deps: HabitTimerDeps,
  participant: Participant,
  profile: Profile,
  options: { signal: AbortSignal; waitForModel: boolean },
): Promise<{ text: string; generated: boolean; usage?: TimerUsage }> {
  const lastGood = profile.lastHabitPrompt ?? FALLBACK_PROMPT;
  if (!profile.fields.prompt_anchor || !profile.fields.preferred_time) return { text: lastGood, generated: false };
  const started = performance.now();
  try {
    const response = await deps.provider.complete(
      { messages: promptGeneratorMessages(participant, profile, deps.generatorPrompt) },
      { signal: options.signal },
    );
    const usage = { modelCalls: 1, modelMs: performance.now() - started };
    const text = response.text.trim();
    return text ? { text, generated: true, usage } : { text: lastGood, generated: false, usage };
  } catch (error) {
    // The model is down: the timer runs again, and the prompt goes out generated once it is back.
    if (options.waitForModel && isModelUnavailable(error)) throw error;
    deps.logger.warn(
      { participantId: participant.id, err: error },
      'prompt generation failed; sending the last good prompt',
    );
    return { text: lastGood, generated: false, usage: { modelCalls: 1, modelMs: performance.now() - started } };
  }
}

function afterPrompt(
  profile: Profile,
  prompt: { text: string; generated: boolean },
  now: Date,
  pollToday: boolean,
): Profile {
  const fieldUpdatedAt: Record<string, Date> = { ...profile.fieldUpdatedAt, total_prompts: now };
  if (pollToday) fieldUpdatedAt.intensity_poll = now;
  return {
    ...profile,
    totalPrompts: profile.totalPrompts + 1,
    lastPromptSentAt: now,
    lastHabitPrompt: prompt.generated ? prompt.text : profile.lastHabitPrompt,
    fieldUpdatedAt,
    updatedAt: now,
  };
}

/** Reminder, auto-feedback and feedback nudge after a prompt; each replaces the pending one. */
async function armFollowUps(
  tx: StoreTx,
  deps: HabitTimerDeps,
  participant: Participant,
  conversationId: string,
  now: Date,
): Promise<void> {
  const payload = { promptSentAt: now.toISOString() };
  const at = (key: string, delayMs: number) => ({
    id: deps.ids.next('tmr'),
    conversationId,
    participantId: participant.id,
    key,
    dueAt: later(now, delayMs),
    now,
  });
  const { reminderMs, autoFeedbackMs, feedbackInitialMs } = deps.delays;
  if (reminderMs > 0) await REMINDER.schedule(tx, payload, at(timerKeys.reminder(participant.id), reminderMs));
  if (autoFeedbackMs > 0)
    await AUTO_FEEDBACK.schedule(tx, payload, at(timerKeys.autoFeedback(participant.id), autoFeedbackMs));
  if (feedbackInitialMs > 0)
    await FEEDBACK_NUDGE.schedule(
      tx,
      { ...payload, stage: 'initial' },
      at(timerKeys.feedbackNudge(participant.id), feedbackInitialMs),
    );
}
