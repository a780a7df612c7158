/**
 * When a failed model call is tried again, and after how long. Pure: time and jitter come
 * from the policy, so tests get exact delays.
 */

/** What went wrong with one attempt, as data. Built by `llm-failure.ts`. */
export interface LlmFailure {
  kind:
    | 'http' // the server answered with an error status before streaming
    | 'network' // no answer at all: refused, reset, DNS
    | 'stream-interrupted' // the stream broke or ended before its finish chunk
    | 'stream-error' // an `{error}` event inside a 200 stream (OpenRouter, OpenAI)
    | 'idle-timeout' // nothing arrived for `idleTimeoutMs`
    | 'bad-response'; // a chunk that is not JSON or not a chat completion chunk
  message: string;
  /** HTTP status, or the numeric `code` of a stream error event. */
  status?: number;
  /** The raw `retry-after` header (seconds or an HTTP date). */
  retryAfter?: string;
  /** The raw `retry-after-ms` header some servers (OpenAI) send. */
  retryAfterMs?: string;
  /** The provider says the quota or spend limit is used up: waiting will not help. */
  quotaExhausted?: boolean;
  /** Text had already been handed to `onTextDelta`: a retry would repeat it. */
  afterText: boolean;
  cause?: unknown;
}

export interface RetryPolicy {
  /** Retries after the first attempt (2 means at most 3 requests). */
  maxRetries: number;
  /** First backoff delay; doubles each attempt. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `retry-after` longer than this is shortened to it. */
  maxRetryAfterMs: number;
  /** In [0, 1): the jitter source. */
  random: () => number;
  /** Epoch milliseconds, for `retry-after` HTTP dates. */
  now: () => number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 2,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 30_000,
  random: Math.random,
  now: () => Date.now(),
};

export type RetryDecision = { retry: true; delayMs: number } | { retry: false };

/** Statuses that can succeed if asked again; 400/401/402/403/404 and other 4xx never do. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

/** Whether this kind of failure could go away by asking again, ignoring attempt counts. */
export function isTransient(failure: LlmFailure): boolean {
  if (failure.quotaExhausted) return false;
  switch (failure.kind) {
    case 'http':
      return failure.status !== undefined && isRetryableStatus(failure.status);
    case 'stream-error':
      return !failure.afterText && (failure.status === undefined || isRetryableStatus(failure.status));
    case 'network':
    case 'stream-interrupted':
    case 'idle-timeout':
      return !failure.afterText;
    case 'bad-response':
      return false;
  }
}

/** `attempt` is the 1-based number of the attempt that just failed. */
export function decideRetry(
  failure: LlmFailure,
  attempt: number,
  policy: RetryPolicy = defaultRetryPolicy,
): RetryDecision {
  if (!isTransient(failure) || attempt > policy.maxRetries) return { retry: false };
  const hinted = retryAfterDelay(failure, policy);
  if (hinted !== undefined) return { retry: true, delayMs: Math.min(hinted, policy.maxRetryAfterMs) };
  return { retry: true, delayMs: backoffDelay(attempt, policy) };
}

/** Exponential backoff with "equal jitter": half fixed, half random, capped. */
export function backoffDelay(attempt: number, policy: RetryPolicy): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + policy.random() * (exponential / 2));
}

function retryAfterDelay(failure: LlmFailure, policy: RetryPolicy): number | undefined {
  const milliseconds = parseNonNegativeNumber(failure.retryAfterMs);
  if (milliseconds !== undefined) return Math.ceil(milliseconds);
  return parseRetryAfter(failure.retryAfter, policy.now());
}

/** `retry-after` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = parseNonNegativeNumber(value);
  if (seconds !== undefined) return Math.ceil(seconds * 1000);
  // An HTTP date names its weekday and month; a bare "-3" would otherwise parse as a year.
  const date = /[a-z]{3}/i.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

function parseNonNegativeNumber(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Number(value);
}
