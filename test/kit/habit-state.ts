import type { Participant } from '../../src/core/domain.ts';
import { emptyProfile } from '../../src/core/profile.ts';
import type { HabitTurnState } from '../../src/flows/habit-coach/habit-turn-state.ts';

/** A working state for unit tests of the habit tools. */
export function testHabitState(
  overrides: Partial<HabitTurnState> = {},
  participant: Partial<Participant> = {},
): HabitTurnState {
  const now = new Date('2026-06-01T12:00:00Z');
  const person: Participant = {
    id: 'part_1',
    phoneNumber: '+14165550123',
    name: 'Alice',
    gender: null,
    ethnicity: null,
    background: null,
    timezone: 'America/Toronto',
    status: 'active',
    cohort: null,
    debug: false,
    enrolledAt: now,
    createdAt: now,
    updatedAt: now,
    ...participant,
  };
  return {
    participant: person,
    startedAt: now,
    profile: emptyProfile(person.id, now),
    profileChanged: false,
    subState: 'INTAKE',
    subStateChanged: false,
    subStateWritten: false,
    schedules: [],
    createdSchedules: [],
    deletedScheduleIds: [],
    nextPromptAt: new Map(),
    pendingTimerKeys: new Set(),
    delayedTransition: undefined,
    notes: [],
    ...overrides,
  };
}
