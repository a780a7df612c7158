import { APICallError, InvalidResponseDataError, JSONParseError, TypeValidationError } from '@ai-sdk/provider';
import { AppError } from '../core/errors.ts';
import type { LlmFailure } from './retry-policy.ts';
import { isRetryableStatus } from './retry-policy.ts';

/** Thrown inside an attempt when the failure is already classified. */
export class LlmAttemptError extends Error {
  readonly failure: Omit<LlmFailure, 'afterText'>;
  constructor(failure: Omit<LlmFailure, 'afterText'>) {
    super(failure.message, { cause: failure.cause });
    this.name = 'LlmAttemptError';
    this.failure = failure;
  }
}

/** A 404 is almost always a base URL without its `/v1`, or a model the server does not serve. */
const NOT_FOUND_HINT =
  ' (…/chat/completions not found: does LLM_BASE_URL end in /v1, and does the server serve LLM_MODEL?)';

/** Provider error codes meaning "the money or quota is used up", not "slow down". */
const QUOTA_CODES = new Set([
  'insufficient_quota',
  'billing_hard_limit_reached',
  'billing_not_active',
  'insufficient_balance',
  'insufficient_credits',
]);
const QUOTA_MESSAGES = [
  /insufficient[ _](quota|credits|balance)/i,
  /spend(ing)? limit/i,
  /billing (hard )?limit/i,
  /exceeded your current quota.*billing/i,
];

/** Turns whatever an attempt threw into an `LlmFailure`; `afterText` is filled in by the caller. */
export function failureFromError(error: unknown): Omit<LlmFailure, 'afterText'> {
  if (error instanceof LlmAttemptError) return error.failure;
  if (APICallError.isInstance(error)) return failureFromApiCall(error);
  if (isMalformedData(error))
    return {
      kind: 'bad-response',
      message: `malformed response from the model server: ${messageOf(error)}`,
      cause: error,
    };
  if (error instanceof TypeError)
    return { kind: 'network', message: `cannot reach the model server: ${messageOf(error)}`, cause: error };
  return {
    kind: 'bad-response',
    message: `unexpected failure talking to the model server: ${messageOf(error)}`,
    cause: error,
  };
}

export function isMalformedData(error: unknown): boolean {
  return (
    JSONParseError.isInstance(error) ||
    TypeValidationError.isInstance(error) ||
    InvalidResponseDataError.isInstance(error)
  );
}

function failureFromApiCall(error: APICallError): Omit<LlmFailure, 'afterText'> {
  const status = error.statusCode;
  if (status === undefined)
    return { kind: 'network', message: `cannot reach the model server: ${error.message}`, cause: error };
  if (status < 400)
    return {
      kind: 'stream-interrupted',
      message: `the model stream broke: ${messageOf(error.cause ?? error)}`,
      cause: error,
    };
  const headers = error.responseHeaders ?? {};
  return {
    kind: 'http',
    status,
    message: `the model server answered ${status}: ${error.message}${status === 404 ? NOT_FOUND_HINT : ''}`,
    retryAfter: headers['retry-after'],
    retryAfterMs: headers['retry-after-ms'],
    quotaExhausted: status === 429 && isQuotaExhausted(error.data ?? error.responseBody),
    cause: error,
  };
}

/** A stream `{error}` event, as the SDK hands it over (the parsed `error` object). */
export function failureFromErrorEvent(event: unknown): Omit<LlmFailure, 'afterText'> {
  const record = typeof event === 'object' && event !== null ? (event as Record<string, unknown>) : {};
  const code = typeof record.code === 'number' ? record.code : Number.parseInt(String(record.code ?? ''), 10);
  const message = typeof record.message === 'string' ? record.message : JSON.stringify(event);
  return {
    kind: 'stream-error',
    status: Number.isFinite(code) && code >= 400 && code < 600 ? code : undefined,
    message: `the model server reported an error mid-stream: ${message}`,
    quotaExhausted: isQuotaExhausted({ error: event }),
    cause: event,
  };
}

/** Looks for OpenAI's `insufficient_quota` and its relatives in an error body (parsed or text). */
export function isQuotaExhausted(body: unknown): boolean {
  const parsed = typeof body === 'string' ? safeJson(body) : body;
  const error = typeof parsed === 'object' && parsed !== null ? (parsed as { error?: unknown }).error : undefined;
  if (typeof error === 'object' && error !== null) {
    const { code, type, message } = error as Record<string, unknown>;
    if (QUOTA_CODES.has(String(code)) || QUOTA_CODES.has(String(type))) return true;
    if (typeof message === 'string' && QUOTA_MESSAGES.some((pattern) => pattern.test(message))) return true;
  }
  return typeof body === 'string' && QUOTA_CODES.has(body.trim());
}

/** The error `complete()` throws once no retry is left or allowed. */
export function toAppError(failure: LlmFailure, attempts: number): AppError {
  const tries = attempts > 1 ? ` (after ${attempts} attempts)` : '';
  const base = { fault: 'model' as const, cause: failure.cause };
  const message = `${failure.message}${tries}`;
  switch (failure.kind) {
    case 'http':
    case 'stream-error':
      if (failure.quotaExhausted || (failure.status !== undefined && !isRetryableStatus(failure.status))) {
        return new AppError('llm_rejected', message, { ...base, retryable: false });
      }
      return new AppError('llm_unavailable', message, { ...base, retryable: true });
    case 'network':
    case 'stream-interrupted':
      return new AppError(
        'llm_unavailable',
        failure.afterText ? `${message}; text had already been streamed` : message,
        { ...base, retryable: true },
      );
    case 'idle-timeout':
      return new AppError('llm_timeout', message, { ...base, retryable: true });
    case 'bad-response':
      return new AppError('llm_bad_response', message, { ...base, retryable: false });
  }
}

export function callTimeoutError(timeoutMs: number, cause: unknown): AppError {
  return new AppError('llm_timeout', `the model call took longer than ${timeoutMs} ms`, {
    fault: 'model',
    retryable: true,
    cause,
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
