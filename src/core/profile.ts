/** The habit-coaching profile of one participant: typed fields, each with when it was last set. */

export const INTENSITIES = ['low', 'normal', 'high'] as const;
export type Intensity = (typeof INTENSITIES)[number];

/** The free-text fields `save_user_profile` may set, by their wire (tool argument) names. */
export const PROFILE_TEXT_FIELDS = [
  'habit_domain',
  'motivational_frame',
  'preferred_time',
  'prompt_anchor',
  'additional_info',
  'last_successful_prompt',
  'last_barrier',
  'last_motivator',
  'last_tweak',
] as const;
export type ProfileTextField = (typeof PROFILE_TEXT_FIELDS)[number];

export interface ToneState {
  /** Tag → score in [0, 1], rounded to 4 decimals. */
  scores: Record<string, number>;
  /** Active tags in a stable order. */
  active: string[];
  /** When the scores last changed; null when never. */
  lastUpdatedAt: Date | null;
}

export interface Profile {
  participantId: string;
  fields: Partial<Record<ProfileTextField, string>>;
  intensity: Intensity;
  successCount: number;
  totalPrompts: number;
  tone: ToneState;
  /** Field name (text fields, `intensity`, `tone`, counters) → when it was last set. */
  fieldUpdatedAt: Record<string, Date>;
  /** The last habit prompt generated for the participant, and when. */
  lastHabitPrompt: string | null;
  lastPromptSentAt: Date | null;
  updatedAt: Date;
}

export function emptyProfile(participantId: string, now: Date): Profile {
  return {
    participantId,
    fields: {},
    intensity: 'normal',
    successCount: 0,
    totalPrompts: 0,
    tone: { scores: {}, active: [], lastUpdatedAt: null },
    fieldUpdatedAt: {},
    lastHabitPrompt: null,
    lastPromptSentAt: null,
    updatedAt: now,
  };
}
