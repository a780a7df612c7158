import type { Selectable } from 'kysely';
import { z } from 'zod';
import { INTENSITIES, PROFILE_TEXT_FIELDS, type Profile } from '../core/profile.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { ProfilesTable } from './schema.ts';
import { fromMs, fromMsOrNull, oneOf, parseJson, toMs, toMsOrNull } from './codec.ts';
import { prepared } from './prepared.ts';

type ProfileOperations = Pick<StoreOperations, 'getProfile' | 'saveProfile'>;

const fieldsSchema = z.partialRecord(z.enum(PROFILE_TEXT_FIELDS), z.string());
const toneSchema = z.object({
  scores: z.record(z.string(), z.number()),
  active: z.array(z.string()),
  lastUpdatedAt: z.number().nullable(),
});
const fieldUpdatedAtSchema = z.record(z.string(), z.number());

const profileOf = prepared((db, a: { participantId: string }) =>
  db.selectFrom('profiles').selectAll().where('participant_id', '=', a.participantId),
);

/** The table's columns, the key first. */
export const PROFILE_COLUMNS = [
  'participant_id',
  'fields',
  'intensity',
  'success_count',
  'total_prompts',
  'tone',
  'field_updated_at',
  'last_habit_prompt',
  'last_prompt_sent_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof ProfilesTable>;
/** Every column but the key, taken from the row that was refused (`excluded`): each value bound once. */
const UPDATED = PROFILE_COLUMNS.slice(1);
const upsertProfile = prepared((db, a: Selectable<ProfilesTable>) =>
  db
    .insertInto('profiles')
    // The arguments are placeholders, read by name (they cannot be listed).
    .values(
      Object.fromEntries(
        ['participant_id', ...UPDATED].map((column) => [column, a[column as keyof typeof a]]),
      ) as never,
    )
    .onConflict((oc) =>
      oc
        .column('participant_id')
        .doUpdateSet((eb) => Object.fromEntries(UPDATED.map((column) => [column, eb.ref(`excluded.${column}`)]))),
    ),
);

export function profileQueries(ctx: QueryContext): ProfileOperations {
  return {
    async getProfile(participantId) {
      const row = await profileOf.first(ctx, { participantId });
      return row && toProfile(row);
    },

    async saveProfile(profile) {
      await upsertProfile.write(ctx, toRow(profile));
    },
  };
}

function toRow(profile: Profile): Selectable<ProfilesTable> {
  return {
    participant_id: profile.participantId,
    fields: JSON.stringify(profile.fields),
    intensity: profile.intensity,
    success_count: profile.successCount,
    total_prompts: profile.totalPrompts,
    tone: JSON.stringify({
      scores: profile.tone.scores,
      active: profile.tone.active,
      lastUpdatedAt: toMsOrNull(profile.tone.lastUpdatedAt),
    }),
    field_updated_at: JSON.stringify(
      Object.fromEntries(Object.entries(profile.fieldUpdatedAt).map(([field, at]) => [field, toMs(at)])),
    ),
    last_habit_prompt: profile.lastHabitPrompt,
    last_prompt_sent_at: toMsOrNull(profile.lastPromptSentAt),
    updated_at: toMs(profile.updatedAt),
  };
}

export function toProfile(row: Selectable<ProfilesTable>): Profile {
  const tone = parseJson(toneSchema, row.tone, 'profile tone');
  const fieldUpdatedAt = parseJson(fieldUpdatedAtSchema, row.field_updated_at, 'profile field_updated_at');
  return {
    participantId: row.participant_id,
    fields: parseJson(fieldsSchema, row.fields, 'profile fields'),
    intensity: oneOf(INTENSITIES, row.intensity, 'profile intensity'),
    successCount: Number(row.success_count),
    totalPrompts: Number(row.total_prompts),
    tone: { scores: tone.scores, active: tone.active, lastUpdatedAt: fromMsOrNull(tone.lastUpdatedAt) },
    fieldUpdatedAt: Object.fromEntries(Object.entries(fieldUpdatedAt).map(([field, ms]) => [field, fromMs(ms)])),
    lastHabitPrompt: row.last_habit_prompt,
    lastPromptSentAt: fromMsOrNull(row.last_prompt_sent_at),
    updatedAt: fromMs(row.updated_at),
  };
}
