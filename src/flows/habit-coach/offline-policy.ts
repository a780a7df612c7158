import type { NumberedOption } from '../../core/poll-numbering.ts';
import type { LlmMessage, LlmRequest } from '../../llm/llm-provider.ts';
import {
  FLOW_MARKER,
  systemOf,
  type OfflinePolicy,
  type OfflineStep,
} from '../../llm/offline/offline-demo-provider.ts';
import {
  asksForChange,
  findAnchor,
  findClockTime,
  findDomain,
  impliedClockTime,
  isAffirmative,
  isNegative,
  requestedTime,
} from './offline-extractors.ts';
import {
  createdScheduleIn,
  deletedScheduleIdsIn,
  deliveryText,
  listedSchedulesIn,
  timeOf,
} from './offline-schedule-replies.ts';
import { DONE_POLL_QUESTION, INTENSITY_POLL_QUESTION, pickOption, stillOpen, type PollStep } from './polls.ts';

const QUESTIONS: Record<string, (known: Record<string, string>) => string> = {
  habit_domain: () =>
    'What small daily habit would you like to build? For example walking, stretching or drinking more water.',
  motivational_frame: (known) => `Why does ${known.habit_domain ?? 'this habit'} matter to you?`,
  preferred_time: () => 'What time of day suits you best? A time like 7am works, or something like "after dinner".',
  prompt_anchor: () =>
    'What do you already do every day that this could follow? For example "after breakfast" or "when I get home".',
};

interface Context {
  known: Record<string, string>;
  missing: string[];
  hasSchedule: boolean;
  feedback: boolean;
  name: string | null;
  /** The intensity the profile has now: after this turn's poll answer, which the flow applies first. */
  intensity: string | null;
}

/** Reads the habit flow's context block (the system message the flow writes for every turn). */
function readContext(messages: LlmMessage[]): Context {
  const block = messages
    .filter((message) => message.role === 'system')
    .map((message) => message.content)
    .join('\n');
  const known: Record<string, string> = {};
  for (const match of block.matchAll(/^- ([a-z_]+): (.+)$/gm)) known[match[1]!] = match[2]!;
  const missing =
    /Still missing: ([^.]+)\./
      .exec(block)?.[1]
      ?.split(', ')
      .map((field) => field.trim()) ?? [];
  return {
    known,
    missing,
    hasSchedule: /Current schedules:/.test(block),
    // Both modules show the profile status; only the feedback context shows the last prompt.
    feedback: /^(Last prompt sent|No habit prompt has been sent yet)/m.test(block),
    name: /Name: (.+)/.exec(block)?.[1] ?? null,
    intensity: /^Intensity: ([a-z]+)\./m.exec(block)?.[1] ?? null,
  };
}

const say = (text: string): OfflineStep => ({ text, toolCalls: [] });

/** The rule-based habit coach: one deterministic step for a request. */
export function offlineHabitStep(request: LlmRequest): OfflineStep {
  const context = readContext(request.messages);
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return afterTools(request.messages, context);
  const text = last?.content ?? '';
  if (text.startsWith('[')) return greet(context);
  const transcript = request.messages.slice(0, -1).filter((message) => message.role !== 'system');
  const picked = pickOption(openPollOptions(transcript), text);
  if (picked) return pollAnswerStep(picked, context);
  return context.feedback ? feedbackStep(text, transcript) : intakeStep(text, context);
}

/**
 * The options of the habit polls the transcript shows that no later reply picked, the way
 * polls.ts `openPolls` reads the stored history: the model reads a poll as its question, then
 * "3. Keep" lines (engine/model-context), so a bare "1" is read against the numbers the person saw.
 */
function openPollOptions(transcript: readonly LlmMessage[]): NumberedOption[] {
  const steps = transcript.map((message, index): PollStep => {
    if (message.role === 'user') return { reply: message.content };
    const shown = message.role === 'assistant' ? shownPoll(message.content, `shown-${index}`) : null;
    return shown && { shown };
  });
  return stillOpen(steps).flat();
}

/** One of the habit coach's polls, as the model reads it; null for any other message. */
function shownPoll(content: string, messageId: string): NumberedOption[] | null {
  const [question, ...lines] = content.split('\n');
  if (question !== DONE_POLL_QUESTION && question !== INTENSITY_POLL_QUESTION) return null;
  const numbered = lines.map((line) => /^(\d+)\. (.+)$/.exec(line));
  if (numbered.length === 0 || numbered.some((match) => !match)) return null;
  const poll = { question, options: numbered.map((match) => match![2]!) };
  return numbered.map((match) => ({ messageId, poll, option: match![2]!, number: Number(match![1]) }));
}

const PRAISE = 'Wonderful, well done! Small steps add up. See you at the next prompt.';
const ASK_BARRIER = "That's okay, it happens. What got in the way?";

/**
 * The reply to a poll answer, which the flow has already recorded before the model runs (a Done
 * counted, the intensity moved): it acknowledges that answer, and says the intensity the profile
 * now has rather than promising a change.
 */
function pollAnswerStep(picked: NumberedOption, context: Context): OfflineStep {
  const next =
    context.feedback || context.missing.length === 0 ? '' : ` ${QUESTIONS[context.missing[0]!]!(context.known)}`;
  return say(`${pollAnswerText(picked, context.intensity)}${next}`);
}

function pollAnswerText(picked: NumberedOption, intensity: string | null): string {
  if (picked.poll.question === DONE_POLL_QUESTION) return picked.option === 'Done' ? PRAISE : ASK_BARRIER;
  if (!intensity) return 'Got it, thanks for letting me know.';
  return picked.option === 'Keep'
    ? `Got it, your prompts stay at ${intensity} intensity.`
    : `Got it, your prompts are now at ${intensity} intensity.`;
}

function greet(context: Context): OfflineStep {
  const hello = context.name ? `Hi ${context.name}!` : 'Hi!';
  const first = context.missing[0] ?? 'habit_domain';
  return say(
    `${hello} I'm your habit coach (the offline demo model: my replies follow simple rules). ` +
      QUESTIONS[first]!(context.known),
  );
}

const GREETING = /^(hi|hello|hey|yo|hiya|good (morning|afternoon|evening))\b[\s!.,]*$/i;

function intakeStep(text: string, context: Context): OfflineStep {
  if (context.missing.length === 0) {
    const time = requestedTime(text);
    if (time) return context.hasSchedule ? timeChangeStep(time) : saveTimeStep(time);
    return context.hasSchedule ? say('You are all set. Tell me how your habit goes anytime!') : planStep();
  }
  if (GREETING.test(text.trim())) return say(`Hello! ${QUESTIONS[context.missing[0]!]?.(context.known) ?? ''}`.trim());
  const asking = context.missing[0]!;
  const found: Record<string, string> = {};
  const domain = findDomain(text);
  const anchor = findAnchor(text);
  const time = findClockTime(text);
  if (domain && context.missing.includes('habit_domain')) found.habit_domain = domain;
  if (anchor && context.missing.includes('prompt_anchor')) found.prompt_anchor = anchor;
  if (time && context.missing.includes('preferred_time')) found.preferred_time = time;
  if (!found[asking] && text.trim().length >= 2)
    found[asking] = asking === 'preferred_time' ? (impliedClockTime(text) ?? text.trim()) : text.trim();
  return { text: '', toolCalls: [{ name: 'save_user_profile', arguments: found }] };
}

/** A new preferred time before any schedule exists: saved, then the plan follows from the complete profile. */
function saveTimeStep(time: string): OfflineStep {
  return { text: '', toolCalls: [{ name: 'save_user_profile', arguments: { preferred_time: time } }] };
}

function planStep(): OfflineStep {
  return { text: '', toolCalls: [{ name: 'generate_habit_prompt', arguments: { delivery_mode: 'immediate' } }] };
}

function feedbackStep(text: string, transcript: readonly LlmMessage[]): OfflineStep {
  // The answer to "What got in the way?" is the barrier, in whatever words, unless it asks for a change.
  const askedBarrier = transcript.at(-1)?.role === 'assistant' && transcript.at(-1)!.content === ASK_BARRIER;
  const time = askedBarrier && !asksForChange(text) ? null : requestedTime(text);
  if (time) return timeChangeStep(time);
  if (isAffirmative(text) && !isNegative(text)) {
    // "Done" (a poll answer) says nothing about what helped; a sentence might.
    const saysWhy = text.trim().split(/\s+/).length >= 4;
    return {
      text: PRAISE,
      toolCalls: saysWhy ? [{ name: 'save_user_profile', arguments: { last_motivator: text.trim() } }] : [],
    };
  }
  if (isNegative(text) || askedBarrier) {
    if (!askedBarrier && text.trim().split(/\s+/).length < 4) return say(ASK_BARRIER);
    const tweak = 'try an even smaller version of the habit right after your anchor';
    return {
      text: `Thanks for telling me. Next time, ${tweak}. Does that sound doable?`,
      toolCalls: [{ name: 'save_user_profile', arguments: { last_barrier: text.trim(), last_tweak: tweak } }],
    };
  }
  // A "done" counts only while a "Did you do it?" poll is open: otherwise nothing would record it.
  const doneOpen = openPollOptions(transcript).some((option) => option.poll.question === DONE_POLL_QUESTION);
  return say(
    doneOpen
      ? 'Thanks for the update! Reply "done" when you have done your habit, or tell me what got in the way.'
      : 'Thanks for the update! Tell me how your habit went, or what got in the way.',
  );
}

/**
 * This turn's tool calls so far: `calls`, the last round's (name and action), `latest`, that round's
 * results (what to do next), and `all`, the results of every round since the participant's message
 * (what earlier rounds saved, generated or listed).
 */
function toolRounds(messages: LlmMessage[]): { calls: string[]; latest: string; all: string } {
  const lastRound = messages.findLastIndex((message) => message.role === 'assistant');
  const round = messages[lastRound];
  const calls = (round?.role === 'assistant' ? (round.toolCalls ?? []) : []).map((call) => {
    const action = /"action"\s*:\s*"([a-z]+)"/.exec(call.arguments)?.[1];
    return action ? `${call.name}:${action}` : call.name;
  });
  const results = (from: number) =>
    messages
      .slice(from)
      .filter((message) => message.role === 'tool')
      .map((message) => message.content)
      .join('\n');
  const turnStart = messages.findLastIndex((message) => message.role === 'user') + 1;
  return { calls, latest: results(lastRound + 1), all: results(turnStart) };
}

function afterTools(messages: LlmMessage[], context: Context): OfflineStep {
  const { calls, latest, all } = toolRounds(messages);
  const stored = context.known.preferred_time;
  for (const saved of all.matchAll(/([a-z_]+) = "([^"]*)"/g)) context.known[saved[1]!] = saved[2]!;
  if (/cannot generate a prompt yet/.test(latest))
    return say(QUESTIONS[context.missing[0] ?? 'prompt_anchor']!(context.known));
  if (/Generated prompt/.test(latest)) return scheduleStep(context);
  if (calls.includes('scheduler:list')) return rescheduleStep(latest, context, stored);
  if (calls.includes('scheduler:create') || calls.includes('scheduler:delete')) {
    const generated = /Generated prompt[^"]*"([^"]+)"/.exec(all)?.[1];
    return generated ? firstScheduleReply(generated, latest, context) : timeChangedReply(latest, all, stored);
  }
  if (/Moved from/.test(latest)) return say('All set! Reply anytime to tell me how it went.');
  const stillMissing = /Still missing: ([^.]+)\./.exec(latest)?.[1]?.split(', ')[0];
  if (stillMissing) return say(`Got it. ${QUESTIONS[stillMissing]?.(context.known) ?? 'Tell me more.'}`);
  if (/intake profile is complete/.test(latest)) return context.hasSchedule ? say('Updated. Thanks!') : planStep();
  return say('Thanks! Anything else you would like to change?');
}

/**
 * The daily prompt's time: the preferred time the profile holds (a part of the day read as a clock
 * time), else the anchor's part of the day, else 09:00, which the reply then says was a pick.
 */
function scheduleTime(known: Record<string, string>): { time: string; picked: boolean } {
  const time = impliedClockTime(known.preferred_time ?? '') ?? impliedClockTime(known.prompt_anchor ?? '');
  return time ? { time, picked: false } : { time: '09:00', picked: true };
}

/** Schedules the first daily prompt; the reply waits for the scheduler's result, which says when. */
function scheduleStep(context: Context): OfflineStep {
  return {
    text: '',
    toolCalls: [
      {
        name: 'scheduler',
        arguments: { action: 'create', type: 'fixed', fixed_time: scheduleTime(context.known).time },
      },
      { name: 'transition_state', arguments: { target_state: 'FEEDBACK' } },
    ],
  };
}

/** The first habit prompt, and when the daily ones come: as the scheduler reported it, or why not. */
function firstScheduleReply(prompt: string, results: string, context: Context): OfflineStep {
  const created = createdScheduleIn(results);
  const first = `Here is your first habit prompt: "${prompt}"`;
  if (!created) return say(`${first} I could not set up your daily prompts: ${toolErrorIn(results)}`);
  const { time, picked } = scheduleTime(context.known);
  const pick = picked ? ` You did not name a time of day, so I picked ${time}; tell me another time anytime.` : '';
  return say(
    `${first} Your daily prompts are set for ${deliveryText(created, 'first')}.${pick} ` +
      'Reply anytime to tell me how it went!',
  );
}

/**
 * A new time for the daily prompt: save it as the preferred time, then see the schedules (the
 * feedback module's context does not list them) to move them.
 */
function timeChangeStep(time: string): OfflineStep {
  return {
    text: '',
    toolCalls: [
      { name: 'save_user_profile', arguments: { preferred_time: time } },
      { name: 'scheduler', arguments: { action: 'list' } },
    ],
  };
}

/**
 * Moves the daily prompt to the preferred time: keeps a schedule already at it, deletes the others,
 * creates one when none is.
 */
function rescheduleStep(listing: string, context: Context, stored: string | undefined): OfflineStep {
  const time = impliedClockTime(context.known.preferred_time ?? '');
  if (!time) return say('Sorry, I could not read that as a time of day. Could you give me one, like 6pm?');
  const schedules = listedSchedulesIn(listing);
  const kept = schedules.find((schedule) => schedule.fixedTime === time);
  const toDelete = schedules.filter((schedule) => schedule !== kept);
  if (kept && toDelete.length === 0) {
    const saved =
      stored === context.known.preferred_time ? ' Nothing changed.' : ` I saved ${time} as your preferred time.`;
    return say(`Your daily prompt is already set for every day ${kept.when} (${kept.timezone}).${saved}`);
  }
  return {
    text: '',
    toolCalls: [
      ...toDelete.map((schedule) => ({ name: 'scheduler', arguments: { action: 'delete', schedule_id: schedule.id } })),
      ...(kept ? [] : [{ name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: time } }]),
    ],
  };
}

/** What a change of time did, as the tools reported it: the schedule moved, the preferred time saved. */
function timeChangedReply(results: string, all: string, stored: string | undefined): OfflineStep {
  const listed = listedSchedulesIn(all);
  const deletedIds = new Set(deletedScheduleIdsIn(results));
  const deleted = listed.filter((schedule) => deletedIds.has(schedule.id));
  const created = createdScheduleIn(results);
  const error = /Error: /.test(results) ? ` Something went wrong on the way: ${toolErrorIn(results)}` : '';
  const savedTime = /preferred_time = "([^"]*)"/.exec(all)?.[1];
  const profile = savedTime ? ` Your preferred time is now ${savedTime}${stored ? ` (it was ${stored})` : ''}.` : '';
  if (!created) {
    const kept = listed.find((schedule) => !deletedIds.has(schedule.id));
    const removed = deleted.map(timeOf).join(' and ');
    const now = kept ? ` Your daily prompt is set for every day ${kept.when} (${kept.timezone}).` : '';
    return say(
      `${removed ? `I removed your daily prompt at ${removed}.` : 'I changed no schedule.'}${now}${profile}${error}`,
    );
  }
  const change =
    deleted.length > 0
      ? `Okay, I moved your daily prompt from ${deleted.map(timeOf).join(' and ')} to ${timeOf(created)}.`
      : `Okay, your daily prompt is now at ${timeOf(created)}.`;
  return say(`${change} It is set for ${deliveryText(created, 'next')}.${profile}${error}`);
}

/** The first tool error of a round's results, without its "Error: " prefix. */
function toolErrorIn(results: string): string {
  return /Error: (.+)/.exec(results)?.[1] ?? 'the scheduler did not say why.';
}

/** The prompt generator's call (no tools): "After <anchor>, <tiny action> for <why>." */
export function offlineHabitPrompt(request: LlmRequest): string {
  const ask = request.messages.at(-1)?.content ?? '';
  const field = (label: string) => new RegExp(`^${label}: (.+)$`, 'm').exec(ask)?.[1];
  const anchor = field('Anchor') ?? 'your morning routine';
  const domain = field('Habit domain');
  const why = field('Motivation');
  const action =
    domain && domain !== '(unknown)' ? `spend two minutes on ${domain}` : 'take one tiny step toward your habit';
  const reason = why && why !== '(unknown)' ? ` Remember why: ${why.replace(/\.$/, '')}.` : '';
  return `${anchor.charAt(0).toUpperCase()}${anchor.slice(1)}, ${action}.${reason}`;
}

/**
 * The habit coach's offline rules: the requests no flow marked are the habit coach's (its prompts
 * are the study's own texts, which carry no marker); a call without tools is the daily prompt's
 * generation.
 */
export const offlineHabitPolicy: OfflinePolicy = (request) => {
  if (FLOW_MARKER.test(systemOf(request))) return null;
  return request.tools?.length ? offlineHabitStep(request) : { text: offlineHabitPrompt(request), toolCalls: [] };
};
