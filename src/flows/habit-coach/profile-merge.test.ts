import { describe, expect, it } from 'vitest';
import { emptyProfile } from '../../core/profile.ts';
import { mergeProfileFields } from './profile-merge.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-02T00:00:00Z');
const stored = mergeProfileFields(
  emptyProfile('p1', T0),
  { habit_domain: 'walking', preferred_time: '07:30' },
  T0,
).profile;

describe('mergeProfileFields', () => {
  it('sets non-empty new values and records when each was set', () => {
    expect(stored.fields).toEqual({ habit_domain: 'walking', preferred_time: '07:30' });
    expect(stored.fieldUpdatedAt.habit_domain).toEqual(T0);
  });

  it('changes only fields whose trimmed value is non-empty and different', () => {
    const { profile, changed } = mergeProfileFields(
      stored,
      { habit_domain: ' walking ', preferred_time: '', prompt_anchor: 'after breakfast' },
      T1,
    );
    expect(changed).toEqual(['prompt_anchor']);
    expect(profile.fields).toEqual({
      habit_domain: 'walking',
      preferred_time: '07:30',
      prompt_anchor: 'after breakfast',
    });
    expect(profile.fieldUpdatedAt.habit_domain).toEqual(T0);
    expect(profile.fieldUpdatedAt.prompt_anchor).toEqual(T1);
    expect(profile.updatedAt).toEqual(T1);
  });

  it('returns the same profile when nothing changes', () => {
    const result = mergeProfileFields(stored, { habit_domain: 'walking', motivational_frame: '   ' }, T1);
    expect(result.changed).toEqual([]);
    expect(result.profile).toBe(stored);
  });

  it('accepts last_blocker as an alias of last_barrier, the canonical name winning', () => {
    expect(mergeProfileFields(stored, { last_blocker: 'rain' }, T1).profile.fields.last_barrier).toBe('rain');
    expect(
      mergeProfileFields(stored, { last_blocker: 'rain', last_barrier: 'work' }, T1).profile.fields.last_barrier,
    ).toBe('work');
    expect(mergeProfileFields(stored, { last_blocker: 'rain', last_barrier: '' }, T1).profile.fields.last_barrier).toBe(
      'rain',
    );
  });
});
