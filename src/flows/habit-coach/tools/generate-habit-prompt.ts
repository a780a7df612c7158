import { z } from 'zod';
import type { Participant } from '../../../core/domain.ts';
import type { Profile } from '../../../core/profile.ts';
import type { LlmMessage, LlmProvider } from '../../../llm/llm-provider.ts';
import { buildToneGuide } from '../tone.ts';
import { defineTool, toolError } from '../../../tools/define-tool.ts';
import { missingFields, REQUIRED_FOR_PROMPT, type HabitTurnState } from '../habit-turn-state.ts';
import { participantBackground } from '../participant-background.ts';

export const generateHabitPromptInput = z.object({
  delivery_mode: z
    .enum(['immediate', 'scheduled'])
    .describe('"immediate": show it in your reply now; "scheduled": keep it for the next scheduled prompt.'),
  personalization_notes: z.string().max(1000).optional().describe('Anything to take into account this time.'),
});

export interface PromptGeneratorDeps {
  provider: LlmProvider;
  systemPrompt: string;
}

/** The messages for the prompt generator's own model call. */
export function promptGeneratorMessages(
  participant: Participant,
  profile: Profile,
  systemPrompt: string,
  notes?: string,
): LlmMessage[] {
  const messages: LlmMessage[] = [{ role: 'system', content: systemPrompt }];
  const tone = buildToneGuide(profile.tone);
  if (tone) messages.push({ role: 'system', content: tone });
  const background = participantBackground(participant);
  if (background) messages.push({ role: 'system', content: background });
  messages.push({ role: 'user', content: promptRequest(profile, notes) });
  return messages;
}

function promptRequest(profile: Profile, notes: string | undefined): string {
  const field = (name: keyof Profile['fields']) => profile.fields[name] ?? '(unknown)';
  return [
    "Write today's habit prompt for this participant.",
    `Habit domain: ${field('habit_domain')}`,
    `Motivation: ${field('motivational_frame')}`,
    `Preferred time: ${field('preferred_time')}`,
    `Anchor: ${field('prompt_anchor')}`,
    `Intensity: ${profile.intensity}`,
    profile.fields.additional_info && `Other: ${profile.fields.additional_info}`,
    profile.fields.last_barrier && `Last barrier: ${profile.fields.last_barrier}`,
    profile.fields.last_tweak && `Agreed tweak: ${profile.fields.last_tweak}`,
    profile.fields.last_successful_prompt && `A prompt that worked before: ${profile.fields.last_successful_prompt}`,
    notes && `Notes for this time: ${notes}`,
  ]
    .filter(Boolean)
    .join('\n');
}

/** Generates a personalised habit prompt with its own model call and keeps it as the last prompt. */
export function generateHabitPromptTool(state: HabitTurnState, deps: PromptGeneratorDeps) {
  return defineTool({
    name: 'generate_habit_prompt',
    description:
      'Write a short personalised habit prompt from the profile. Needs prompt_anchor and preferred_time in the ' +
      'profile first (save them with save_user_profile).',
    input: generateHabitPromptInput,
    execute: async ({ delivery_mode, personalization_notes }, { signal }) => {
      const missing = missingFields(state.profile, REQUIRED_FOR_PROMPT);
      if (missing.length > 0) {
        return toolError(
          `cannot generate a prompt yet: the profile is missing ${missing.join(' and ')}. ` +
            'Ask the participant, save the answer with save_user_profile, then try again.',
        );
      }
      const messages = promptGeneratorMessages(
        state.participant,
        state.profile,
        deps.systemPrompt,
        personalization_notes,
      );
      const response = await deps.provider.complete({ messages }, { signal });
      const prompt = response.text.trim();
      if (!prompt) return toolError('the prompt generator returned nothing; try again or write the prompt yourself.');
      state.profile = { ...state.profile, lastHabitPrompt: prompt, updatedAt: state.startedAt };
      state.profileChanged = true;
      state.notes.push('generate_habit_prompt: generated');
      const warnings = missingFields(state.profile, ['habit_domain', 'motivational_frame']);
      const warning =
        warnings.length > 0 ? ` Note: ${warnings.join(' and ')} unknown, so the prompt is less personal.` : '';
      return delivery_mode === 'immediate'
        ? `Generated prompt (share it with the participant in your reply): "${prompt}".${warning}`
        : `Generated and saved as the latest prompt: "${prompt}". ` +
            'Each scheduled delivery writes a fresh prompt from the profile and sends this one only if that fails.' +
            warning;
    },
  });
}
