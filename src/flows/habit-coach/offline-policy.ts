import type { NumberedOption } from '../../core/poll-numbering.ts';
import type { LlmMessage, LlmRequest } from '../../llm/llm-provider.ts';
import {
  FLOW_MARKER,
  systemOf,
  type OfflinePolicy,
  type OfflineStep,
} from '../../llm/offline/offline-demo-provider.ts';
import {
  findAnchor,
  findClockTime,
  findDomain,
  impliedClockTime,
  isAffirmative,
  isNegative,
} from './offline-extractors.ts';
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
  if (context.missing.length === 0)
    return context.hasSchedule ? say('You are all set. Tell me how your habit goes anytime!') : planStep();
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

function planStep(): OfflineStep {
  return { text: '', toolCalls: [{ name: 'generate_habit_prompt', arguments: { delivery_mode: 'immediate' } }] };
}

function feedbackStep(text: string, transcript: readonly LlmMessage[]): OfflineStep {
  if (isAffirmative(text) && !isNegative(text)) {
    // "Done" (a poll answer) says nothing about what helped; a sentence might.
    const saysWhy = text.trim().split(/\s+/).length >= 4;
    return {
      text: PRAISE,
      toolCalls: saysWhy ? [{ name: 'save_user_profile', arguments: { last_motivator: text.trim() } }] : [],
    };
  }
  // The answer to "What got in the way?" is the barrier, in whatever words.
  const askedBarrier = transcript.at(-1)?.role === 'assistant' && transcript.at(-1)!.content === ASK_BARRIER;
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

function afterTools(messages: LlmMessage[], context: Context): OfflineStep {
  const results = messages
    .slice(messages.findLastIndex((message) => message.role === 'assistant') + 1)
    .map((message) => message.content);
  const joined = results.join('\n');
  for (const saved of joined.matchAll(/([a-z_]+) = "([^"]*)"/g)) context.known[saved[1]!] = saved[2]!;
  if (/cannot generate a prompt yet/.test(joined))
    return say(QUESTIONS[context.missing[0] ?? 'prompt_anchor']!(context.known));
  const generated = /Generated prompt[^"]*"([^"]+)"/.exec(joined)?.[1];
  if (generated) return scheduleStep(generated, context);
  if (/Created schedule|Moved from/.test(joined)) return say('All set! Reply anytime to tell me how it went.');
  const stillMissing = /Still missing: ([^.]+)\./.exec(joined)?.[1]?.split(', ')[0];
  if (stillMissing) return say(`Got it. ${QUESTIONS[stillMissing]?.(context.known) ?? 'Tell me more.'}`);
  if (/intake profile is complete/.test(joined)) return context.hasSchedule ? say('Updated. Thanks!') : planStep();
  return say('Thanks! Anything else you would like to change?');
}

function scheduleStep(prompt: string, context: Context): OfflineStep {
  const time =
    impliedClockTime(context.known.preferred_time ?? '') ??
    impliedClockTime(context.known.prompt_anchor ?? '') ??
    '09:00';
  return {
    text:
      `Here is your first habit prompt: "${prompt}" I'll send you one every day at ${time}. ` +
      'Reply anytime to tell me how it went!',
    toolCalls: [
      { name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: time } },
      { name: 'transition_state', arguments: { target_state: 'FEEDBACK' } },
    ],
  };
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
