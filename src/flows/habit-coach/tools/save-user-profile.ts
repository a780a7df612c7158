import { z } from 'zod';
import { assertNever } from '../../../core/errors.ts';
import { defineTool } from '../../../tools/define-tool.ts';
import { normalizeToneTags, updateTone } from '../tone.ts';
import { mergeProfileFields } from '../profile-merge.ts';
import { missingFields, type HabitTurnState } from '../habit-turn-state.ts';

const text = (description: string) => z.string().max(1000).optional().describe(description);

export const saveUserProfileInput = z.object({
  habit_domain: text('The area of the habit, e.g. "walking", "sleep", "hydration".'),
  motivational_frame: text('Why the habit matters to the participant, in their words.'),
  preferred_time: text('When in the day suits them, e.g. "07:30" or "after dinner".'),
  prompt_anchor: text('The existing routine the habit attaches to, e.g. "after breakfast".'),
  additional_info: text('Anything else useful for personalising prompts.'),
  last_successful_prompt: text('The prompt that last worked.'),
  last_barrier: text('What got in the way last time.'),
  last_blocker: text('Deprecated alias of last_barrier.'),
  last_motivator: text('What helped last time.'),
  last_tweak: text('The small change agreed for next time.'),
  tone_tags: z
    .array(z.string().max(50))
    .max(15)
    .optional()
    .describe('Tone preferences observed, from the tone whitelist.'),
  tone_update_source: z
    .enum(['explicit', 'implicit'])
    .optional()
    .describe('"explicit" when the participant asked for it; "implicit" when inferred.'),
  tone_confidence: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('How sure you are of an implicit tone observation (0-1).'),
});

/** Field-by-field merge of profile facts, plus tone proposals. */
export function saveUserProfileTool(state: HabitTurnState) {
  return defineTool({
    name: 'save_user_profile',
    description:
      'Save facts about the participant to their profile as soon as you learn them. Only non-empty values that ' +
      'differ from the stored ones change anything; empty values never clear a field.',
    input: saveUserProfileInput,
    execute: (input) => {
      const { tone_tags, tone_update_source, tone_confidence, ...fields } = input;
      const merged = mergeProfileFields(state.profile, fields, state.startedAt);
      const lines: string[] = [];
      if (merged.changed.length > 0) {
        state.profile = merged.profile;
        state.profileChanged = true;
        lines.push(
          `Saved: ${merged.changed.map((field) => `${field} = "${merged.profile.fields[field]}"`).join(', ')}.`,
        );
      } else {
        lines.push('No profile field changed (the values were empty or already stored).');
      }
      if (tone_tags !== undefined)
        lines.push(applyTone(state, tone_tags, tone_update_source ?? 'implicit', tone_confidence));
      const missing = missingFields(state.profile);
      lines.push(missing.length > 0 ? `Still missing: ${missing.join(', ')}.` : 'The intake profile is complete.');
      state.notes.push(`save_user_profile: ${merged.changed.join(', ') || 'no change'}`);
      return lines.join(' ');
    },
  });
}

function applyTone(
  state: HabitTurnState,
  rawTags: string[],
  source: 'explicit' | 'implicit',
  confidence: number | undefined,
): string {
  const tags = normalizeToneTags(rawTags);
  const dropped = rawTags.length - tags.length;
  const { state: tone, outcome } = updateTone(state.profile.tone, { tags, source, confidence }, state.startedAt);
  const note = dropped > 0 ? ` (${dropped} unknown or repeated tag(s) ignored)` : '';
  switch (outcome) {
    case 'applied':
      state.profile = {
        ...state.profile,
        tone,
        fieldUpdatedAt: { ...state.profile.fieldUpdatedAt, tone: state.startedAt },
        updatedAt: state.startedAt,
      };
      state.profileChanged = true;
      return `Tone updated${note}; active tone tags: ${tone.active.join(', ') || 'none'}.`;
    case 'rate-limited':
      return `Tone not updated${note}: implicit tone updates are limited to one every 3 minutes.`;
    case 'unchanged':
      return `Tone unchanged${note}.`;
    case 'empty':
      return `Tone not updated: no valid tone tags${note}.`;
  }
  return assertNever(outcome, 'tone outcome');
}
