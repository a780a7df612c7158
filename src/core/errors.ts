/**
 * Errors that cross a boundary carry a stable `code`, a fault class and whether a retry can help.
 * One function in `http/` maps codes to HTTP statuses; nothing else branches on messages.
 */
export type Fault = 'user' | 'model' | 'channel' | 'system';

export const ERROR_CODES = [
  'invalid_json',
  'invalid_request',
  'payload_too_large',
  'headers_too_large',
  'request_timeout',
  'unsupported_media_type',
  'unauthorized',
  'token_expired',
  'invalid_signature',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'conflict',
  'approval_decided',
  'rate_limited',
  'invalid_phone_number',
  'invalid_timezone',
  'participant_not_found',
  'participant_exists',
  'participant_inactive',
  'message_id_reused',
  'version_conflict',
  'llm_unavailable',
  'llm_rejected',
  'llm_timeout',
  'llm_bad_response',
  'channel_failed',
  'custom_generator_failed',
  'shutting_down',
  'store_unavailable',
  'clock_not_virtual',
  'interrupted',
  'invalid_frame',
  'slow_consumer',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface AppErrorOptions {
  fault?: Fault;
  retryable?: boolean;
  cause?: unknown;
  /** The request field the error is about, as a dotted path (`phone_number`, `caller.phone`). */
  field?: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly fault: Fault;
  readonly retryable: boolean;
  readonly field: string | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.fault = options.fault ?? 'user';
    this.retryable = options.retryable ?? false;
    this.field = options.field;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/**
 * The model cannot answer right now for a reason that passes (refused connection, timeout, 429,
 * 5xx): the turn waits and runs again, like during a database outage. Not a 401, a 404 or a 400.
 */
export function isModelUnavailable(error: unknown): boolean {
  return isAppError(error) && (error.code === 'llm_unavailable' || error.code === 'llm_timeout');
}

/** The store cannot serve right now (unreachable, locked, full): worth a 503 and a retry, never an apology for good. */
export function isStoreUnavailable(error: unknown): boolean {
  return isAppError(error) && error.code === 'store_unavailable';
}

export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}

/** A message for logs that never throws, whatever was thrown. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
