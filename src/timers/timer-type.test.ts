import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { NewTimer } from '../core/timer.ts';
import { defineTimerKind, timerType } from './timer-kinds.ts';

const NUDGE = timerType('nudge', z.object({ sentAt: z.iso.datetime().transform((value) => new Date(value)) }));
const at = {
  id: 'tmr_1',
  conversationId: 'c1',
  participantId: 'p1',
  key: 'nudge:p1',
  dueAt: new Date('2026-11-25T12:00:00Z'),
  now: new Date('2026-11-25T11:00:00Z'),
};

describe('timerType', () => {
  it('arms its own kind with the payload as stored, and its kind reads it back as the handler gets it', async () => {
    const scheduled: NewTimer[] = [];
    const row = await NUDGE.schedule(
      { scheduleTimer: async (timer) => void scheduled.push(timer) },
      { sentAt: '2026-11-25T10:00:00.000Z' },
      at,
    );
    expect(scheduled).toEqual([row]);
    expect(row).toEqual({
      id: 'tmr_1',
      kind: 'nudge',
      conversationId: 'c1',
      participantId: 'p1',
      dedupKey: 'nudge:p1',
      dueAt: at.dueAt,
      payload: { sentAt: '2026-11-25T10:00:00.000Z' },
      createdAt: at.now,
    });
    const kind = defineTimerKind({ ...NUDGE, handle: async () => undefined });
    expect(kind.kind).toBe('nudge');
    expect(kind.payload.parse(row.payload)).toEqual({ sentAt: new Date('2026-11-25T10:00:00Z') });
  });

  it('refuses, at compile time, a payload that is not the kind’s', () => {
    // @ts-expect-error: a Date is what the handler gets, not what is stored
    expect(NUDGE.row({ sentAt: new Date() }, at).kind).toBe('nudge');
    // @ts-expect-error: a field the kind does not have
    expect(NUDGE.row({ sentAt: '2026-11-25T10:00:00Z', stage: 'x' }, at).kind).toBe('nudge');
  });
});
