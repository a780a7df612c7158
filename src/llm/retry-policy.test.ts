import { describe, expect, it } from 'vitest';
import { isQuotaExhausted, toAppError } from './llm-failure.ts';
import type { LlmFailure, RetryPolicy } from './retry-policy.ts';
import { backoffDelay, decideRetry, parseRetryAfter } from './retry-policy.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const policy: RetryPolicy = {
  maxRetries: 2,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 30_000,
  random: () => 0.5,
  now: () => NOW,
};
const failure = (overrides: Partial<LlmFailure>): LlmFailure => ({
  kind: 'http',
  message: 'x',
  afterText: false,
  ...overrides,
});

describe('decideRetry', () => {
  it.each([429, 500, 502, 503, 504, 408])('retries status %i', (status) => {
    expect(decideRetry(failure({ status }), 1, policy)).toEqual({ retry: true, delayMs: 375 });
  });

  it.each([400, 401, 402, 403, 404, 422, 501])('never retries status %i', (status) => {
    expect(decideRetry(failure({ status }), 1, policy)).toEqual({ retry: false });
  });

  it('never retries a 429 whose quota is exhausted', () => {
    expect(decideRetry(failure({ status: 429, quotaExhausted: true, retryAfter: '1' }), 1, policy)).toEqual({
      retry: false,
    });
  });

  it('stops after maxRetries', () => {
    expect(decideRetry(failure({ status: 503 }), 2, policy).retry).toBe(true);
    expect(decideRetry(failure({ status: 503 }), 3, policy)).toEqual({ retry: false });
    expect(decideRetry(failure({ status: 503 }), 1, { ...policy, maxRetries: 0 })).toEqual({ retry: false });
  });

  it('honours retry-after in seconds, as an HTTP date, and retry-after-ms; caps it', () => {
    expect(decideRetry(failure({ status: 429, retryAfter: '7' }), 1, policy)).toEqual({ retry: true, delayMs: 7_000 });
    expect(decideRetry(failure({ status: 503, retryAfter: 'Sun, 01 Mar 2026 12:00:12 GMT' }), 1, policy)).toEqual({
      retry: true,
      delayMs: 12_000,
    });
    expect(decideRetry(failure({ status: 429, retryAfter: '7', retryAfterMs: '250' }), 1, policy)).toEqual({
      retry: true,
      delayMs: 250,
    });
    expect(decideRetry(failure({ status: 429, retryAfter: '3600' }), 1, policy)).toEqual({
      retry: true,
      delayMs: 30_000,
    });
    expect(decideRetry(failure({ status: 429, retryAfter: 'soon' }), 1, policy)).toEqual({ retry: true, delayMs: 375 });
  });

  it('retries network errors, and cut or stalled streams only before any text was delivered', () => {
    for (const kind of ['network', 'stream-interrupted', 'idle-timeout'] as const) {
      expect(decideRetry(failure({ kind }), 1, policy).retry).toBe(true);
    }
    expect(decideRetry(failure({ kind: 'stream-interrupted', afterText: true }), 1, policy)).toEqual({ retry: false });
    expect(decideRetry(failure({ kind: 'idle-timeout', afterText: true }), 1, policy)).toEqual({ retry: false });
  });

  it('never retries malformed responses; retries stream error events unless they are 4xx or quota', () => {
    expect(decideRetry(failure({ kind: 'bad-response' }), 1, policy)).toEqual({ retry: false });
    expect(decideRetry(failure({ kind: 'stream-error' }), 1, policy).retry).toBe(true);
    expect(decideRetry(failure({ kind: 'stream-error', status: 400 }), 1, policy)).toEqual({ retry: false });
    expect(decideRetry(failure({ kind: 'stream-error', afterText: true }), 1, policy)).toEqual({ retry: false });
  });
});

describe('backoffDelay', () => {
  it('doubles per attempt with jitter in [half, full], capped', () => {
    expect([1, 2, 3].map((attempt) => backoffDelay(attempt, { ...policy, random: () => 0 }))).toEqual([
      250, 500, 1_000,
    ]);
    expect([1, 2, 3].map((attempt) => backoffDelay(attempt, { ...policy, random: () => 0.999_999 }))).toEqual([
      500, 1_000, 2_000,
    ]);
    expect(backoffDelay(10, { ...policy, random: () => 0 })).toBe(4_000);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds, fractional seconds, past and future dates', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('1.5', NOW)).toBe(1_500);
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', NOW)).toBe(0);
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter('-3', NOW)).toBeUndefined();
  });
});

describe('failure classification', () => {
  it('recognises exhausted quota in OpenAI and similar bodies', () => {
    expect(
      isQuotaExhausted({
        error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' },
      }),
    ).toBe(true);
    expect(isQuotaExhausted(JSON.stringify({ error: { message: 'x', code: 'insufficient_quota' } }))).toBe(true);
    expect(isQuotaExhausted({ error: { message: 'Monthly spend limit reached', code: 429 } })).toBe(true);
    expect(
      isQuotaExhausted({ error: { message: 'Rate limit reached for requests', code: 'rate_limit_exceeded' } }),
    ).toBe(false);
    expect(isQuotaExhausted(undefined)).toBe(false);
  });

  it('maps failures to AppError codes with fault model', () => {
    const cases: Array<[Partial<LlmFailure>, string, boolean]> = [
      [{ status: 401 }, 'llm_rejected', false],
      [{ status: 429, quotaExhausted: true }, 'llm_rejected', false],
      [{ status: 503 }, 'llm_unavailable', true],
      [{ kind: 'network' }, 'llm_unavailable', true],
      [{ kind: 'stream-interrupted', afterText: true }, 'llm_unavailable', true],
      [{ kind: 'idle-timeout' }, 'llm_timeout', true],
      [{ kind: 'bad-response' }, 'llm_bad_response', false],
    ];
    for (const [overrides, code, retryable] of cases) {
      const cause = new Error('underlying');
      const error = toAppError(failure({ ...overrides, cause }), 3);
      expect(error).toMatchObject({ code, retryable, fault: 'model', cause });
    }
  });
});
