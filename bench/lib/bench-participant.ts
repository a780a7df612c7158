import type { Participant } from '../../src/core/domain.ts';

/** An active participant as a workload seeds one: `p<index>`, no demographics. */
export function benchParticipant(index: number, phoneNumber: string, timezone: string | null): Participant {
  const now = new Date();
  return {
    id: `p${index}`,
    phoneNumber,
    name: null,
    gender: null,
    ethnicity: null,
    background: null,
    timezone,
    status: 'active',
    cohort: null,
    debug: false,
    enrolledAt: now,
    createdAt: now,
    updatedAt: now,
  };
}
