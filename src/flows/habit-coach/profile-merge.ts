import { PROFILE_TEXT_FIELDS, type Profile, type ProfileTextField } from '../../core/profile.ts';

/** Profile facts as the model sends them: every field optional; `last_blocker` is an old alias. */
export type ProfileFieldsInput = Partial<Record<ProfileTextField | 'last_blocker', string | undefined>>;

/**
 * Field-by-field merge: a field changes only when the new value is non-empty (after trimming)
 * and differs from the stored one. Empty values never clear a field.
 */
export function mergeProfileFields(
  profile: Profile,
  input: ProfileFieldsInput,
  now: Date,
): { profile: Profile; changed: ProfileTextField[] } {
  const proposed: ProfileFieldsInput = { ...input, last_barrier: input.last_barrier?.trim() || input.last_blocker };
  const fields = { ...profile.fields };
  const fieldUpdatedAt = { ...profile.fieldUpdatedAt };
  const changed: ProfileTextField[] = [];
  for (const field of PROFILE_TEXT_FIELDS) {
    const value = proposed[field]?.trim();
    if (!value || value === fields[field]) continue;
    fields[field] = value;
    fieldUpdatedAt[field] = now;
    changed.push(field);
  }
  if (changed.length === 0) return { profile, changed };
  return { profile: { ...profile, fields, fieldUpdatedAt, updatedAt: now }, changed };
}
