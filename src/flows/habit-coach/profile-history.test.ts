import { describe, expect, it } from 'vitest';
import type { ToolCallRecord, TurnRecord } from '../../core/domain.ts';
import { profileHistory } from './profile-history.ts';

const turn = (id: string, startedAt: string, status: TurnRecord['status'] = 'completed'): TurnRecord => ({
  id,
  conversationId: 'c1',
  inboxId: null,
  trigger: 'message',
  module: 'INTAKE',
  status,
  modelCalls: 1,
  toolRounds: 1,
  modelMs: 0,
  toolMs: 0,
  totalMs: 0,
  firstTokenMs: null,
  timeToStatusMs: null,
  error: null,
  startedAt: new Date(startedAt),
  finishedAt: new Date(startedAt),
  attempts: 1,
});
const call = (id: string, turnId: string, args: unknown, status: ToolCallRecord['status'] = 'ok'): ToolCallRecord => ({
  id,
  turnId,
  conversationId: 'c1',
  round: 1,
  name: 'save_user_profile',
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
  result: '',
  status,
  durationMs: 1,
  createdAt: new Date(0),
});

describe('profileHistory', () => {
  it('replays the calls of completed turns only, as the tool merged them, and tone with its rate limit', () => {
    const turns = [
      turn('t1', '2026-06-01T12:00:00Z'),
      turn('t2', '2026-06-01T12:01:00Z', 'failed'),
      turn('t3', '2026-06-01T12:02:00Z'),
      turn('t4', '2026-06-01T12:10:00Z'),
    ];
    const calls = [
      call('k1', 't1', { habit_domain: 'walking', tone_tags: ['casual'] }),
      call('k2', 't2', { habit_domain: 'running' }), // its turn failed: nothing was saved
      call('k3', 't3', { habit_domain: ' walking ', preferred_time: '07:00', tone_tags: ['casual'] }),
      call('k4', 't3', '{"habit_domain": '), // malformed: the tool refused it
      call('k5', 't4', { habit_domain: 'swimming', tone_tags: ['casual', 'nonsense'] }),
      call('k6', 't4', { preferred_time: '09:00' }, 'error'),
    ];
    const { changes, tone } = profileHistory(turns, calls, []);
    expect(changes.map((c) => [c.sourceId, c.field, c.oldValue, c.newValue, c.at.toISOString()])).toEqual([
      ['k1', 'habit_domain', null, 'walking', '2026-06-01T12:00:00.000Z'],
      ['k3', 'preferred_time', null, '07:00', '2026-06-01T12:02:00.000Z'],
      ['k5', 'habit_domain', 'walking', 'swimming', '2026-06-01T12:10:00.000Z'],
    ]);
    // Implicit updates at most every 3 minutes: the one at 12:02 was refused, 12:10 applied.
    expect(tone.map((t) => [t.toolCallId, t.source, t.proposed, t.scores])).toEqual([
      ['k1', 'implicit', ['casual'], { casual: 0.15 }],
      ['k5', 'implicit', ['casual'], { casual: 0.2775 }],
    ]);
  });
});
