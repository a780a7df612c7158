import type { Message, ToolCallRecord, TurnRecord } from '../../core/domain.ts';
import { emptyProfile, type Profile } from '../../core/profile.ts';
import { pollAnswers } from './adherence.ts';
import { INTENSITY_POLL_QUESTION, nextIntensity } from './polls.ts';
import { mergeProfileFields } from './profile-merge.ts';
import { normalizeToneTags, updateTone } from './tone.ts';
import { saveUserProfileInput } from './tools/save-user-profile.ts';

/**
 * A participant's profile history, replayed from what is kept: the `save_user_profile` calls of
 * completed turns (through the same merge and tone rules, at the turn's start, as the tool ran
 * them) and the intensity poll's answers. Changes made any other way (an imported profile) are
 * not in it.
 */

export interface ProfileChange {
  at: Date;
  field: string;
  oldValue: string | null;
  newValue: string;
  source: 'save_user_profile' | 'intensity_poll';
  /** The tool call or the answering message. */
  sourceId: string;
}

export interface ToneChange {
  at: Date;
  source: 'explicit' | 'implicit';
  proposed: readonly string[];
  active: readonly string[];
  scores: Readonly<Record<string, number>>;
  toolCallId: string;
}

type Step = { at: Date; apply: (profile: Profile, history: ProfileHistory) => Profile };
interface ProfileHistory {
  changes: ProfileChange[];
  tone: ToneChange[];
}

export function profileHistory(
  turns: readonly TurnRecord[],
  calls: readonly ToolCallRecord[],
  messages: readonly Message[],
): ProfileHistory {
  const completed = new Map(turns.filter((turn) => turn.status === 'completed').map((turn) => [turn.id, turn]));
  const steps: Step[] = [
    // A poll answer is applied before the model runs, so before its turn's tool calls.
    ...pollAnswers(messages)
      .filter((answer) => answer.poll.poll?.question === INTENSITY_POLL_QUESTION)
      .map((answer) => ({ at: answer.answer.createdAt, apply: intensityStep(answer.option, answer.answer) })),
    ...calls
      .filter((call) => call.name === 'save_user_profile' && call.status === 'ok' && completed.has(call.turnId))
      .map((call) => ({
        at: completed.get(call.turnId)!.startedAt,
        apply: profileStep(call, completed.get(call.turnId)!),
      })),
  ];
  steps.sort((a, b) => a.at.getTime() - b.at.getTime()); // stable: calls keep their order within a turn
  const history: ProfileHistory = { changes: [], tone: [] };
  let profile = emptyProfile('', new Date(0));
  for (const step of steps) profile = step.apply(profile, history);
  return history;
}

function intensityStep(option: string, answer: Message): Step['apply'] {
  return (profile, history) => {
    const next = nextIntensity(profile.intensity, option);
    if (next === profile.intensity) return profile;
    history.changes.push({
      at: answer.createdAt,
      field: 'intensity',
      oldValue: profile.intensity,
      newValue: next,
      source: 'intensity_poll',
      sourceId: answer.id,
    });
    return { ...profile, intensity: next };
  };
}

function profileStep(call: ToolCallRecord, turn: TurnRecord): Step['apply'] {
  return (profile, history) => {
    const input = parseArguments(call.arguments);
    if (!input) return profile;
    const { tone_tags: toneTags, tone_update_source: toneSource, tone_confidence: confidence, ...fields } = input;
    const at = turn.startedAt;
    const merged = mergeProfileFields(profile, fields, at);
    for (const field of merged.changed) {
      const [oldValue, newValue] = [profile.fields[field] ?? null, merged.profile.fields[field]!];
      history.changes.push({ at, field, oldValue, newValue, source: 'save_user_profile', sourceId: call.id });
    }
    if (toneTags === undefined) return merged.profile;
    const proposal = { tags: normalizeToneTags(toneTags), source: toneSource ?? 'implicit', confidence } as const;
    const { state: tone, outcome } = updateTone(merged.profile.tone, proposal, at);
    if (outcome !== 'applied') return merged.profile;
    history.tone.push({
      at,
      source: proposal.source,
      proposed: proposal.tags,
      active: tone.active,
      scores: tone.scores,
      toolCallId: call.id,
    });
    return { ...merged.profile, tone };
  };
}

function parseArguments(text: string) {
  try {
    const parsed = saveUserProfileInput.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
