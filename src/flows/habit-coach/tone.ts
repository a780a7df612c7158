import type { ToneState } from '../../core/profile.ts';

/**
 * Tone adaptation: a whitelist of tags, scores smoothed over observations, and an active set
 * with hysteresis. The numbers are a behavioural contract (BEHAVIOR-NOTES.md "Tone adaptation").
 */

export const TONE_TAGS = [
  // style
  'concise',
  'detailed',
  'formal',
  'casual',
  'no_emojis',
  'emojis_ok',
  'bullet_points',
  'one_question_at_a_time',
  // stance
  'warm_supportive',
  'neutral_professional',
  'direct_coach',
  'gentle_coach',
  // interaction
  'confirm_before_acting',
  'default_actionable',
  'high_autonomy',
] as const;
export type ToneTag = (typeof TONE_TAGS)[number];

const STANCE_TAGS: readonly ToneTag[] = ['warm_supportive', 'neutral_professional', 'direct_coach', 'gentle_coach'];
const EXCLUSIVE_PAIRS: readonly (readonly [ToneTag, ToneTag])[] = [
  ['concise', 'detailed'],
  ['formal', 'casual'],
  ['direct_coach', 'gentle_coach'],
];

export const TONE_ALPHA = 0.15;
export const TONE_ACTIVATE = 0.7;
export const TONE_DEACTIVATE = 0.4;
export const TONE_IMPLICIT_MIN_INTERVAL_MS = 3 * 60_000;
const LOSER_SCORE = 0.39;

export type ToneSource = 'explicit' | 'implicit';
export interface ToneProposal {
  tags: readonly ToneTag[];
  source: ToneSource;
  /** Accepted for the record; the contract ignores it. */
  confidence?: number | undefined;
}
export type ToneOutcome = 'applied' | 'rate-limited' | 'unchanged' | 'empty';

const isToneTag = (tag: string): tag is ToneTag => (TONE_TAGS as readonly string[]).includes(tag);

/** Lowercase, trim, drop unknown tags, dedupe keeping the first occurrence. */
export function normalizeToneTags(raw: readonly string[]): ToneTag[] {
  const tags: ToneTag[] = [];
  for (const candidate of raw.map((tag) => tag.trim().toLowerCase())) {
    if (isToneTag(candidate) && !tags.includes(candidate)) tags.push(candidate);
  }
  return tags;
}

/** Round to 4 decimals, robust to binary representation (0.622855 → 0.6229). */
export const roundScore = (value: number): number => Math.round(Number((value * 10_000).toPrecision(12))) / 10_000;
const clampScore = (value: number): number => roundScore(Math.min(1, Math.max(0, value)));

/** Applies one proposal. A rate-limited, empty or no-op proposal leaves the state (and its clock) as it was. */
export function updateTone(
  state: ToneState,
  proposal: ToneProposal,
  now: Date,
): { state: ToneState; outcome: ToneOutcome } {
  if (proposal.tags.length === 0) return { state, outcome: 'empty' };
  if (
    proposal.source === 'implicit' &&
    state.lastUpdatedAt &&
    now.getTime() - state.lastUpdatedAt.getTime() < TONE_IMPLICIT_MIN_INTERVAL_MS
  ) {
    return { state, outcome: 'rate-limited' };
  }
  const scores = resolveConflicts(nextScores(state.scores, proposal));
  const active = nextActive(state.active, scores);
  if (sameScores(scores, state.scores) && sameList(active, state.active)) return { state, outcome: 'unchanged' };
  return { state: { scores, active, lastUpdatedAt: now }, outcome: 'applied' };
}

function nextScores(previous: Record<string, number>, { tags, source }: ToneProposal): Record<string, number> {
  const scores: Record<string, number> = {};
  for (const tag of TONE_TAGS) {
    const old = previous[tag];
    const observed = tags.includes(tag);
    if (source === 'explicit') {
      if (observed) scores[tag] = 1;
      else if (old !== undefined) scores[tag] = clampScore(old);
    } else if (observed) {
      scores[tag] = clampScore((1 - TONE_ALPHA) * (old ?? 0) + TONE_ALPHA);
    } else if (old !== undefined) {
      scores[tag] = clampScore((1 - TONE_ALPHA) * old);
    }
  }
  return scores;
}

function resolveConflicts(scores: Record<string, number>): Record<string, number> {
  if ((scores.no_emojis ?? 0) >= TONE_ACTIVATE && scores.emojis_ok !== undefined) scores.emojis_ok = 0;
  for (const [first, second] of EXCLUSIVE_PAIRS) {
    const a = scores[first] ?? 0;
    const b = scores[second] ?? 0;
    if (a >= TONE_ACTIVATE && b >= TONE_ACTIVATE) {
      if (b > a) scores[first] = LOSER_SCORE;
      else scores[second] = LOSER_SCORE;
    }
  }
  return scores;
}

function nextActive(previous: readonly string[], scores: Record<string, number>): ToneTag[] {
  return TONE_TAGS.filter((tag) => {
    const score = scores[tag] ?? 0;
    if (score >= TONE_ACTIVATE) return true;
    if (score <= TONE_DEACTIVATE) return false;
    return previous.includes(tag);
  });
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((tag, i) => tag === b[i]);
function sameScores(a: Record<string, number>, b: Record<string, number>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) => a[key] === b[key]);
}

function outvoted(tag: ToneTag, { active, scores }: Pick<ToneState, 'active' | 'scores'>): boolean {
  const pair = EXCLUSIVE_PAIRS.find((p) => p.includes(tag));
  if (!pair) return false;
  const [first, second] = pair;
  if (!active.includes(first) || !active.includes(second)) return false;
  const winner = (scores[second] ?? 0) > (scores[first] ?? 0) ? second : first;
  return tag !== winner;
}

const INSTRUCTIONS: Record<ToneTag, string> = {
  concise: 'Keep replies short: two or three sentences at most.',
  detailed: 'Give fuller explanations when they help, with concrete detail.',
  formal: 'Use a polite, formal register.',
  casual: 'Use a relaxed, friendly, casual register.',
  no_emojis: 'Do not use emojis.',
  emojis_ok: 'An occasional emoji is welcome.',
  bullet_points: 'Prefer short bullet points over paragraphs when listing things.',
  one_question_at_a_time: 'Ask at most one question per message.',
  warm_supportive: 'Be warm and encouraging; acknowledge effort before suggesting changes.',
  neutral_professional: 'Keep a neutral, professional stance.',
  direct_coach: 'Be direct: name the next step plainly, without hedging.',
  gentle_coach: 'Be gentle: suggest rather than instruct, and never pressure.',
  confirm_before_acting: 'Confirm with the participant before saving, scheduling or changing anything.',
  default_actionable: 'End with one small, concrete action the participant can take.',
  high_autonomy: 'Respect their autonomy: offer options and let them choose.',
};

/**
 * The tone guide system message for the active tags; empty when none is active. Hysteresis can
 * leave both tags of an exclusive pair active (one fading, one fresh): the guide then follows the
 * higher score (the first of the pair on a tie) rather than giving contradictory instructions.
 */
export function buildToneGuide(tone: Pick<ToneState, 'active' | 'scores'>): string {
  const tags = TONE_TAGS.filter((tag) => tone.active.includes(tag) && !outvoted(tag, tone));
  if (tags.length === 0) return '';
  const lines = ['Tone guide — adapt your style to what this participant has shown they prefer:'];
  for (const tag of tags) lines.push(`- ${INSTRUCTIONS[tag]}`);
  if (!tags.some((tag) => STANCE_TAGS.includes(tag))) lines.push('- Keep a neutral, friendly stance.');
  lines.push('- Never mirror hostility or rudeness; stay calm and respectful whatever the tone of the message.');
  return lines.join('\n');
}
