import { describe, expect, it } from 'vitest';
import type { ChannelStatus } from '../observability/observed-gate.ts';
import { OUTBOX_AGE_LIMIT_S, overallHealth, TIMER_LATENESS_LIMIT_S, TIMER_WORKER_STALL_S } from './health.ts';

const NOW = new Date('2026-06-01T12:00:00Z');
const secondsAgo = (s: number) => new Date(NOW.getTime() - s * 1000);
const quiet = { oldest_outbox_age_s: null, outbox_pending: 0, timer_lateness_s: null };
const channel = (state: ChannelStatus['state'], lastError: string | null = null): ChannelStatus => ({
  state,
  lastSuccessAt: null,
  lastErrorAt: null,
  lastError,
  lastErrorRetryable: lastError ? true : null,
  consecutiveFailures: state === 'failing' ? 2 : 0,
});
const healthy = {
  store: { ok: true } as const,
  channels: { webhook: channel('ok') },
  timerWorker: { running: true, lastProgressAt: secondsAgo(1) },
  queues: quiet,
  now: NOW,
};

describe('overallHealth', () => {
  it('is ok when everything answers and nothing waits too long', () => {
    expect(overallHealth(healthy)).toEqual({ status: 'ok', problems: [] });
  });

  it('is down, for that reason alone, when the store cannot serve', () => {
    const health = overallHealth({
      ...healthy,
      store: { ok: false, problem: 'the database did not answer within 2000 ms' },
      channels: { webhook: channel('failing', 'HTTP 503') },
    });
    expect(health).toEqual({ status: 'down', problems: ['store: the database did not answer within 2000 ms'] });
  });

  it('is degraded while a channel fails, naming it and its last error', () => {
    const health = overallHealth({
      ...healthy,
      channels: { webhook: channel('ok'), whatsapp: channel('failing', 'Graph API answered 500') },
    });
    expect(health).toEqual({
      status: 'degraded',
      problems: ['channel whatsapp: Graph API answered 500 (2 in a row)'],
    });
  });

  it('is degraded when the timer worker is stuck, and not before', () => {
    const at = (s: number) =>
      overallHealth({ ...healthy, timerWorker: { running: true, lastProgressAt: secondsAgo(s) } });
    expect(at(TIMER_WORKER_STALL_S).status).toBe('ok');
    expect(at(TIMER_WORKER_STALL_S + 1)).toEqual({
      status: 'degraded',
      problems: [`timer worker: stuck, no pass for ${TIMER_WORKER_STALL_S + 1} s`],
    });
    // A stopped worker (virtual clock: timers fire when the clock is moved) is not stuck.
    expect(
      overallHealth({ ...healthy, timerWorker: { running: false, lastProgressAt: secondsAgo(9999) } }).status,
    ).toBe('ok');
  });

  it('is degraded when due timers are late or deliveries pend too long (any process)', () => {
    const late = overallHealth({ ...healthy, queues: { ...quiet, timer_lateness_s: TIMER_LATENESS_LIMIT_S + 5 } });
    expect(late.problems).toEqual([`timers: the oldest due timer is ${TIMER_LATENESS_LIMIT_S + 5} s late`]);
    const backlog = overallHealth({
      ...healthy,
      queues: { ...quiet, outbox_pending: 40, oldest_outbox_age_s: OUTBOX_AGE_LIMIT_S + 1 },
    });
    expect(backlog).toEqual({
      status: 'degraded',
      problems: [`outbox: 40 deliveries pending, the oldest for ${OUTBOX_AGE_LIMIT_S + 1} s`],
    });
    const within = { ...quiet, outbox_pending: 40, oldest_outbox_age_s: OUTBOX_AGE_LIMIT_S, timer_lateness_s: 30 };
    expect(overallHealth({ ...healthy, queues: within }).status).toBe('ok');
  });

  it('lists every problem at once, the model first', () => {
    const health = overallHealth({
      ...healthy,
      model: {
        state: 'failing',
        lastSuccessAt: null,
        lastErrorAt: null,
        lastError: 'llm_unavailable: connection refused',
        lastErrorTransient: true,
        consecutiveFailures: 3,
      },
      channels: { twilio: channel('failing', 'HTTP 500') },
    });
    expect(health.problems).toEqual([
      'model: llm_unavailable: connection refused',
      'channel twilio: HTTP 500 (2 in a row)',
    ]);
  });
});
