import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { AppError, type ErrorCode, isAppError } from '../core/errors.ts';

/** The one place that maps error codes to HTTP statuses. */
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'invalid_json':
    case 'invalid_request':
    case 'invalid_phone_number':
    case 'invalid_timezone':
    case 'invalid_frame':
      return 400;
    case 'unauthorized':
    case 'token_expired':
    case 'invalid_signature':
      return 401;
    case 'forbidden':
      return 403;
    case 'not_found':
    case 'participant_not_found':
      return 404;
    case 'method_not_allowed':
      return 405;
    case 'conflict':
    case 'approval_decided':
    case 'participant_exists':
    case 'participant_inactive':
    case 'message_id_reused':
    case 'version_conflict':
    case 'clock_not_virtual':
    case 'interrupted':
      return 409;
    case 'request_timeout':
      return 408;
    case 'payload_too_large':
      return 413;
    case 'unsupported_media_type':
      return 415;
    case 'headers_too_large':
      return 431;
    case 'rate_limited':
    case 'slow_consumer':
      return 429;
    case 'shutting_down':
    case 'store_unavailable':
    case 'llm_unavailable':
    case 'llm_timeout':
      return 503;
    case 'llm_rejected':
    case 'llm_bad_response':
    case 'channel_failed':
      return 502;
    case 'internal':
    case 'custom_generator_failed':
      return 500;
  }
}

/** Turns a zod failure on a request part into an AppError naming the first bad field. */
export function requestError(part: 'body' | 'query' | 'params', error: z.ZodError): AppError {
  const issue = error.issues[0];
  // An unknown key is named itself (under its object's path), not the object holding it.
  const keys = issue?.code === 'unrecognized_keys' ? issue.keys : [];
  const segments = issue ? [...issue.path, ...(keys.length === 1 ? keys : [])] : [];
  const path = segments.length > 0 ? segments.join('.') : undefined;
  const where = path ?? part;
  // A query string names a parameter twice (`?limit=1&limit=2`) as an array.
  const repeated = part === 'query' && issue !== undefined && Array.isArray(issue.input);
  const detail = repeated ? 'is given more than once' : issue ? describeIssue(issue) : 'is invalid';
  return new AppError('invalid_request', `${where}: ${detail}`, { field: path ?? part });
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'is required';
  if (issue.code === 'invalid_type') {
    const expected = issue.expected === 'int' ? 'an integer' : `of type ${issue.expected}`;
    return `must be ${expected} (got ${typeName(issue.input)})`;
  }
  return issue.message;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && Number.isNaN(value)) return 'not a number';
  if (typeof value === 'number' && !Number.isInteger(value)) return 'a fraction';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Parses one request part with a schema, throwing a 400 that names the field. */
export function parseRequest<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  part: 'body' | 'query' | 'params',
): z.output<Schema> {
  // With the input in each issue, a field of the wrong type is told apart from a missing one.
  const result = schema.safeParse(value ?? (part === 'body' ? undefined : {}), { reportInput: true });
  if (!result.success) throw requestError(part, result.error);
  return result.data;
}

export function errorBody(error: AppError) {
  return {
    status: 'error' as const,
    code: error.code,
    message: error.message,
    ...(error.field ? { field: error.field } : {}),
  };
}

/**
 * A 401 says how to authenticate (RFC 9110, 11.6.1): a bearer token, and when one was sent and
 * refused, that it was (RFC 6750). A webhook's refused signature is the provider's scheme, not ours.
 */
const BEARER_CHALLENGES: Partial<Record<ErrorCode, string>> = {
  unauthorized: 'Bearer realm="PromptPipe"',
  token_expired: 'Bearer realm="PromptPipe", error="invalid_token", error_description="the token expired"',
};

/** Every error leaves as the error envelope with a stable code; internals are never exposed. */
export function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const appError = toAppError(error);
  const status = httpStatusOf(appError.code);
  if (appError.code === 'store_unavailable') void reply.header('retry-after', '5');
  const challenge = BEARER_CHALLENGES[appError.code];
  if (challenge) void reply.header('www-authenticate', challenge);
  if (status >= 500) request.log.error({ err: error }, 'request failed');
  void reply.status(status).send(errorBody(appError));
}

/** Valid JSON refused for a key that could change every object's prototype (Fastify says only "not valid JSON"). */
export function forbiddenKey(): AppError {
  return new AppError('invalid_json', 'the body contains a forbidden key (__proto__ or constructor.prototype)', {
    field: 'body',
  });
}

function toAppError(error: FastifyError | Error): AppError {
  if (isAppError(error)) return error;
  const fastifyError = error as FastifyError;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'the request body is larger than the server accepts', { field: 'body' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'send the body as application/json', { field: 'content-type' });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'the body is empty; send a JSON object', { field: 'body' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_json', `the body is not valid JSON: ${fastifyError.message}`, { field: 'body' });
  }
  if (fastifyError.statusCode === 400 && error instanceof SyntaxError) {
    return new AppError('invalid_json', `the body is not valid JSON: ${error.message}`, { field: 'body' });
  }
  if (fastifyError.statusCode === 429)
    return new AppError('rate_limited', 'too many requests; slow down and retry later');
  if (fastifyError.statusCode && fastifyError.statusCode < 500) {
    return new AppError('invalid_request', fastifyError.message);
  }
  return new AppError('internal', 'internal error', { fault: 'system', cause: error });
}

/**
 * What Node's HTTP parser refuses before any route or hook runs (Fastify's `clientErrorHandler`):
 * answered in the error envelope too, on a connection that then closes. A reset connection has no
 * one left to answer.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const appError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('headers_too_large', 'the request headers are larger than the server accepts (16 KiB)', {
          field: 'headers',
        })
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('request_timeout', 'the request did not arrive in full within 30 s', { field: 'request' })
        : new AppError('invalid_request', 'request: is not valid HTTP/1.1', { field: 'request' });
  const status = httpStatusOf(appError.code);
  const body = JSON.stringify(errorBody(appError));
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(error);
}
