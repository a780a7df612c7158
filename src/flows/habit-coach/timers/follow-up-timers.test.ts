import { describe, expect, it, vi } from 'vitest';
import type { Timer } from '../../../core/timer.ts';
import type { HabitTimerDeps } from './habit-timer-deps.ts';
import { stateTransitionTimerKind } from './follow-up-timers.ts';

const NOW = new Date('2026-06-01T12:00:00Z');
const conversation = { id: 'c1', participantId: 'p1', version: 3, subState: 'INTAKE' };
const participant = { id: 'p1', status: 'active' };
const timer = { id: 't1', conversationId: 'c1', participantId: 'p1' } as Timer;

/** A store where someone else wrote the conversation between the timer's read and its commit. */
function depsWithStaleVersion() {
  const tx = {
    lockParticipant: async () => participant,
    updateConversation: vi.fn(async () => undefined),
    cancelTimer: vi.fn(async () => true),
    completeTimer: vi.fn(async () => undefined),
  };
  const store = {
    getConversation: async () => conversation,
    getParticipant: async () => participant,
    transaction: (work: (t: typeof tx) => Promise<unknown>) => work(tx),
  };
  return { deps: { store, clock: { now: () => NOW } } as unknown as HabitTimerDeps, tx };
}

describe('the state-transition timer', () => {
  it('fails (to run again later) instead of completing when the conversation changed under it', async () => {
    const { deps, tx } = depsWithStaleVersion();
    const kind = stateTransitionTimerKind(deps);
    await expect(
      kind.handle(
        timer,
        { target: 'FEEDBACK' },
        {
          now: NOW,
          signal: new AbortController().signal,
          retryAt: null,
          complete: (tx) => tx.completeTimer(timer.id, NOW).then(() => undefined),
        },
      ),
    ).rejects.toMatchObject({ code: 'version_conflict' });
    expect(tx.updateConversation).toHaveBeenCalledWith('c1', 3, { subState: 'FEEDBACK' }, NOW);
    expect(tx.completeTimer).not.toHaveBeenCalled();
  });
});
