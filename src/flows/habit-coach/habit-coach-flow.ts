import type { Clock, IdGenerator } from '../../core/clock.ts';
import { emptyProfile, type Profile } from '../../core/profile.ts';
import type { Schedule } from '../../core/schedule.ts';
import type { Flow, PreparedTurn, TurnRequest } from '../../engine/flow.ts';
import type { LlmMessage, LlmProvider } from '../../llm/llm-provider.ts';
import type { FlowWrites } from '../../store/store.ts';
import { coachingColumns, coachingStateOf, type CoachingQueries } from './coaching-queries.ts';
import type { AnyTool } from '../../tools/define-tool.ts';
import { buildToneGuide } from './tone.ts';
import { describeSchedule, nextFireTime, sameDateIn } from '../../timers/schedule-math.ts';
import { debugMessages } from './debug-messages.ts';
import {
  describeProfile,
  missingFields,
  REQUIRED_FOR_PROMPT,
  type HabitTurnState,
  type SubState,
} from './habit-turn-state.ts';
import { participantBackground } from './participant-background.ts';
import { applyPollAnswer } from './polls.ts';
import type { HabitPrompts } from './prompt-files.ts';
import { generateHabitPromptTool } from './tools/generate-habit-prompt.ts';
import { saveUserProfileTool } from './tools/save-user-profile.ts';
import { schedulerTool } from './tools/scheduler.ts';
import { transitionStateTool } from './tools/transition-state.ts';
import { dailyPromptTimer, dailyPromptTimerDueAt } from './timers/daily-prompt-timer.ts';
import { timerKeys } from './timers/habit-timer-deps.ts';
import { STATE_TRANSITION } from './timers/follow-up-timers.ts';

export const HABIT_COACH_FLOW = 'habit-coach';
export const CONVERSATION_ACTIVE = 'CONVERSATION_ACTIVE';

export const FALLBACK_REPLY = "I'm here with you. Could you tell me a bit more?";

export interface HabitCoachOptions {
  prompts: HabitPrompts;
  provider: LlmProvider;
  ids: IdGenerator;
  clock: Clock;
  random: () => number;
  prepMinutes: number;
  /** Global debug mode (`PROMPTPIPE_DEBUG`); participants may also have it on their own. */
  debug: boolean;
  /** The module's turn reads (its store extension). */
  queries: CoachingQueries;
}

/** Routes a turn by sub-state: an unknown or missing one goes to intake and is persisted as INTAKE. */
export function routeSubState(subState: string | null): { module: SubState; normalized: boolean } {
  if (subState === 'INTAKE' || subState === 'FEEDBACK') return { module: subState, normalized: false };
  return { module: 'INTAKE', normalized: true };
}

/** The PromptPipe habit-coaching flow: an intake module and a feedback module sharing four tools. */
export function createHabitCoachFlow(options: HabitCoachOptions): Flow {
  return {
    id: HABIT_COACH_FLOW,
    initialState: () => ({ state: CONVERSATION_ACTIVE, subState: 'INTAKE' }),
    subStates: ['INTAKE', 'FEEDBACK'],
    // An operator's write of the sub-state wins over pending automatic moves.
    onSubStateForced: async (tx, conversation, now) => {
      if (!conversation.participantId) return;
      await tx.cancelTimers(
        [timerKeys.stateTransition(conversation.participantId), timerKeys.autoFeedback(conversation.participantId)],
        now,
      );
    },
    onParticipantResumed: async (tx, conversation, now) => {
      if (!conversation.participantId) return;
      for (const schedule of await tx.listSchedules(conversation.participantId)) {
        await tx.scheduleTimer(dailyPromptTimer(schedule, conversation.id, now, options));
      }
    },
    // Schedules read in the zone they had (none chosen, or the participant's) follow them to the
    // new one; one pinned to another zone by the model stays.
    onParticipantMoved: async (tx, conversation, from, to, now) => {
      const participantId = conversation.participantId;
      if (!participantId) return;
      const pending = await tx.listPendingTimers(participantId);
      for (const schedule of await tx.listSchedules(participantId)) {
        if (from !== null && schedule.timezone !== from) continue;
        await tx.setScheduleTimezone(schedule.id, to);
        const planned = pending.find((timer) => timer.dedupKey === timerKeys.dailyPrompt(schedule.id));
        if (planned)
          await tx.scheduleTimer(
            movedPromptTimer(
              { ...schedule, timezone: to },
              schedule.timezone,
              planned.dueAt,
              conversation.id,
              now,
              options,
            ),
          );
      }
    },
    greetingHint: (participant) =>
      `[The participant ${participant?.name ? `(${participant.name}) ` : ''}` +
      'has just joined the program and is expecting a greeting. ' +
      'Greet them warmly, say in a sentence what this is about, and ask your first question.]',
    prepareTurn: async (request) => prepareTurn(request, options),
    contextRead: coachingColumns,
  };
}

/**
 * The next prompt of a schedule that moved zone: on the date it was planned for (so nobody gets
 * a second prompt on a day they already had one), at its time in the new zone, never in the past.
 * Paused participants have nothing planned, and get their timers when they resume.
 */
function movedPromptTimer(
  moved: Schedule,
  fromZone: string,
  plannedAt: Date,
  conversationId: string,
  now: Date,
  options: HabitCoachOptions,
) {
  const after = new Date(Math.max(now.getTime(), sameDateIn(plannedAt, fromZone, moved.timezone).getTime() - 1));
  return dailyPromptTimerDueAt(moved, conversationId, nextFireTime(moved, after, options.random), now, options);
}

async function prepareTurn(request: TurnRequest, options: HabitCoachOptions): Promise<PreparedTurn> {
  const participant = request.participant;
  if (!participant) throw new Error('the habit-coach flow needs a participant');
  const route = routeSubState(request.conversation.subState);
  const { profile, schedules, pendingTimers } = request.contextColumns
    ? coachingStateOf(request.contextColumns)
    : await options.queries.coachingState(participant.id);
  const state: HabitTurnState = {
    participant,
    startedAt: request.now,
    profile: profile ?? emptyProfile(participant.id, request.now),
    profileChanged: false,
    subState: route.module,
    subStateChanged: route.normalized,
    subStateWritten: false,
    schedules,
    createdSchedules: [],
    deletedScheduleIds: [],
    nextPromptAt: armedPromptTimes(schedules, pendingTimers),
    pendingTimerKeys: new Set(pendingTimers.keys()),
    delayedTransition: undefined,
    notes: [],
  };
  if (request.input.kind === 'message') applyPollAnswer(state, request.history, request.input.text);
  const module = state.subState;
  return {
    module,
    systemMessages: systemMessages(state, module, options),
    tools: moduleTools(state, module, options),
    fallbackText: FALLBACK_REPLY,
    finish: () => ({
      ...(state.subStateChanged ? { conversationPatch: { subState: state.subState } } : {}),
      extraMessages: participant.debug || options.debug ? debugMessages(state, module) : [],
    }),
    commit: (tx) => commitState(tx, state, request, options),
  };
}

const HABIT_TOOLS = ['save_user_profile', 'scheduler', 'generate_habit_prompt', 'transition_state'] as const;
type HabitToolName = (typeof HABIT_TOOLS)[number];

/**
 * The tools each module gets (BEHAVIOR-NOTES "Modules and tools"). Its shipped prompt says when to
 * use each of them: feedback regenerates the habit prompt when a tweak or a request calls for it.
 */
export const MODULE_TOOLS: Readonly<Record<SubState, readonly HabitToolName[]>> = {
  INTAKE: HABIT_TOOLS,
  FEEDBACK: HABIT_TOOLS,
};

function moduleTools(state: HabitTurnState, module: SubState, options: HabitCoachOptions): AnyTool[] {
  const build: Record<HabitToolName, () => AnyTool> = {
    save_user_profile: () => saveUserProfileTool(state),
    scheduler: () => schedulerTool(state, options),
    generate_habit_prompt: () =>
      generateHabitPromptTool(state, { provider: options.provider, systemPrompt: options.prompts.generator }),
    transition_state: () => transitionStateTool(state),
  };
  return MODULE_TOOLS[module].map((name) => build[name]());
}

/** When each schedule's pending daily-prompt timer is due: what the scheduler tool reports as the next prompt. */
function armedPromptTimes(schedules: Schedule[], pendingTimers: ReadonlyMap<string, Date>): Map<string, Date> {
  const armed = new Map<string, Date>();
  for (const schedule of schedules) {
    const dueAt = pendingTimers.get(timerKeys.dailyPrompt(schedule.id));
    if (dueAt) armed.set(schedule.id, dueAt);
  }
  return armed;
}

function systemMessages(state: HabitTurnState, module: SubState, options: HabitCoachOptions): LlmMessage[] {
  const messages: LlmMessage[] = [
    { role: 'system', content: module === 'INTAKE' ? options.prompts.intake : options.prompts.feedback },
  ];
  messages.push({ role: 'system', content: module === 'INTAKE' ? intakeContext(state) : feedbackContext(state) });
  const tone = buildToneGuide(state.profile.tone);
  if (tone) messages.push({ role: 'system', content: tone });
  return messages;
}

const CONTEXT_HEADING = 'Context for this turn (from the system, not the participant):';

function intakeContext(state: HabitTurnState): string {
  const background = participantBackground(state.participant);
  const schedules = state.schedules.map((schedule) => `- ${schedule.id}: ${describeSchedule(schedule)}`);
  return [
    CONTEXT_HEADING,
    describeProfile(state.profile),
    background ?? 'No enrollment background was given.',
    `Participant time zone: ${state.participant.timezone ?? 'unknown (ask if it matters)'}.`,
    schedules.length > 0 ? `Current schedules:\n${schedules.join('\n')}` : 'No schedules yet.',
  ].join('\n\n');
}

/**
 * The same profile status as intake reads (known fields, what is still missing, counters), so the
 * feedback module can see when it must send the participant back to intake (spec 000 "Profile
 * Status Injection", 002 §9 scenario 2), plus the last prompt it asks about.
 */
function feedbackContext(state: HabitTurnState): string {
  const { profile } = state;
  const sentAt = profile.lastPromptSentAt ? ` at ${profile.lastPromptSentAt.toISOString()}` : '';
  const lastPrompt = profile.lastHabitPrompt
    ? `Last prompt sent${sentAt}: "${profile.lastHabitPrompt}"`
    : 'No habit prompt has been sent yet.';
  return [CONTEXT_HEADING, describeProfile(profile), intakeNeeded(profile), lastPrompt].filter(Boolean).join('\n\n');
}

/** Without these fields no prompt can be generated: the feedback module should hand back to intake, not ask itself. */
function intakeNeeded(profile: Profile): string | undefined {
  const missing = missingFields(profile, REQUIRED_FOR_PROMPT);
  if (missing.length === 0) return undefined;
  return (
    `Habit prompts need ${missing.join(' and ')}, which the profile lacks: ` +
    'move back to intake with transition_state to collect them.'
  );
}

/**
 * The first prompt time the scheduler tool told the model for a schedule created this turn. The
 * timer is armed for exactly that time, even if the turn ran past it (it then fires at once):
 * a new draw would contradict what the participant was told.
 */
function toldPromptTime(state: HabitTurnState, schedule: Schedule): Date {
  const told = state.nextPromptAt.get(schedule.id);
  if (!told) throw new Error(`schedule ${schedule.id} was created without a next prompt time`);
  return told;
}

async function commitState(
  tx: FlowWrites,
  state: HabitTurnState,
  request: TurnRequest,
  options: HabitCoachOptions,
): Promise<void> {
  const participantId = state.participant.id;
  const conversationId = request.conversation.id;
  const now = options.clock.now();
  if (state.profileChanged) await tx.saveProfile(state.profile);
  for (const schedule of state.createdSchedules) {
    await tx.insertSchedule(schedule);
    await tx.scheduleTimer(
      dailyPromptTimerDueAt(schedule, conversationId, toldPromptTime(state, schedule), now, options),
    );
  }
  for (const id of state.deletedScheduleIds) {
    await tx.deleteSchedule(id);
    await tx.cancelTimer(timerKeys.dailyPrompt(id), now);
  }
  const cancelled = [
    // A reply cancels the pending reminder and feedback nudges of the last prompt.
    ...(request.input.kind === 'message'
      ? [timerKeys.reminder(participantId), timerKeys.feedbackNudge(participantId)]
      : []),
    ...(state.subStateChanged || state.subStateWritten ? [timerKeys.autoFeedback(participantId)] : []),
    ...(state.delayedTransition === null ? [timerKeys.stateTransition(participantId)] : []),
  ];
  await tx.cancelTimers(
    cancelled.filter((key) => state.pendingTimerKeys.has(key)),
    now,
  );
  if (state.delayedTransition) {
    const { target, dueAt } = state.delayedTransition;
    await STATE_TRANSITION.schedule(
      tx,
      { target },
      {
        id: options.ids.next('tmr'),
        conversationId,
        participantId,
        key: timerKeys.stateTransition(participantId),
        dueAt,
        now,
      },
    );
  }
}
