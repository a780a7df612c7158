import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../core/clock.ts';
import { AppError, describeError } from '../core/errors.ts';
import type { EventHub } from '../events/event-hub.ts';
import type { SessionEvent } from '../events/session-event.ts';
import { errorBody } from './http-errors.ts';

/**
 * The session stream's transport (spec 004): the frames a client may send on the WebSocket, and
 * the stream to a socket or to server-sent events, with its back-pressure and its per-client
 * events. The routes that open them are in `session-routes.ts`.
 */

/** Beyond this many unsent bytes a stream consumer is too slow: it is dropped and resumes by cursor. */
export const MAX_BUFFERED_BYTES = 1 << 20;
export const SLOW_CONSUMER_CLOSE_CODE = 4008;

/** A phone as a caller types or says it (spec 004's `phoneNumber`); read with `DEFAULT_PHONE_REGION`. */
export const phoneText = z.string().trim().min(1, 'must not be empty').max(120);
/** What a client may send on the socket. */
const ref = z.string().min(1).max(100).optional();
const spoken = z.string().trim().min(1, 'must not be empty').max(32_000);
export const socketFrame = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('resync'), lastEventId: z.number().int().nonnegative() }),
  z.strictObject({ type: z.literal('ping') }),
  // The same inputs as POST …/message, each answered with an `ack` carrying the client's `ref`.
  z.strictObject({
    type: z.literal('message'),
    text: spoken,
    message_id: z.string().min(1).max(200).optional(),
    phoneNumber: phoneText.optional(),
    ref,
  }),
  z.strictObject({
    type: z.literal('final_transcript'),
    text: spoken,
    message_id: z.string().min(1).max(200).optional(),
    phoneNumber: phoneText.optional(),
    ref,
  }),
  z.strictObject({ type: z.literal('barge_in'), ref }),
]);
export type InputFrame = Extract<z.output<typeof socketFrame>, { type: 'message' | 'final_transcript' | 'barge_in' }>;
/** Handles a client's input frame; undefined for a socket that may only read. */
export type SocketInput =
  ((frame: InputFrame) => Promise<{ inboxId?: string; duplicate?: boolean; interrupted?: boolean }>) | undefined;

/** The bits of a `ws` socket the stream uses (the plugin's types are not installed). */
export interface Socket {
  readonly bufferedAmount: number;
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  on(event: 'message', listener: (data: Buffer | string) => void): void;
  on(event: 'close', listener: () => void): void;
}

/**
 * The fields of an event for one client only (an error, a pong): outside the log, seq 0; `at` on
 * the conversation's clock, as its logged events (the virtual one in demos).
 */
function clientOnly(conversationId: string, at: Date) {
  return {
    seq: 0,
    conversationId,
    turnId: null,
    messageId: null,
    role: 'system' as const,
    correlationId: null,
    at: at.toISOString(),
  };
}

/** The last event of a stream whose conversation was deleted: the stream closes after it. */
export function conversationGone(conversationId: string, at: Date): SessionEvent {
  return errorEvent(
    conversationId,
    new AppError('not_found', `conversation ${conversationId} was deleted with its participant`, { field: 'id' }),
    at,
  );
}

const isGone = (event: SessionEvent) => event.type === 'error' && event.seq === 0 && event.data.code === 'not_found';

export function errorEvent(conversationId: string, error: unknown, at: Date): SessionEvent {
  const appError = error instanceof AppError ? error : new AppError('internal', 'internal error');
  const { code, message, field } = errorBody(appError);
  return {
    type: 'error',
    ...clientOnly(conversationId, at),
    text: message,
    data: { code, ...(field ? { field } : {}) },
  };
}

export function streamToSocket(
  socket: Socket,
  events: Pick<EventHub, 'attach'>,
  clock: Pick<Clock, 'now'>,
  conversationId: string,
  cursor: number | null,
  input?: SocketInput,
): void {
  let detach: (() => void) | undefined;
  let closed = false;
  const send = (event: SessionEvent) => {
    if (closed) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      closed = true;
      detach?.();
      socket.close(SLOW_CONSUMER_CLOSE_CODE, 'slow consumer: reconnect with your last seq');
      return;
    }
    socket.send(JSON.stringify(event));
    if (isGone(event)) {
      closed = true;
      socket.close(1008, 'not_found');
    }
  };
  // One replay at a time: resync frames that arrive during one are folded into the latest.
  let wanted: { from: number | null } | null = null;
  let following = false;
  const follow = (from: number | null) => {
    wanted = { from };
    if (following) return;
    following = true;
    void (async () => {
      while (wanted && !closed) {
        const { from: next } = wanted;
        wanted = null;
        detach?.();
        detach = undefined;
        try {
          const unsubscribe = await events.attach(conversationId, next, send);
          if (closed) unsubscribe();
          else detach = unsubscribe;
        } catch (error) {
          send(errorEvent(conversationId, error, clock.now()));
        }
      }
      following = false;
    })();
  };
  const budget = new FrameBudget();
  socket.on('message', (data) => {
    const verdict = budget.take();
    if (verdict === 'close') return socket.close(POLICY_VIOLATION, 'too many frames');
    if (verdict === 'refuse')
      return send(
        errorEvent(
          conversationId,
          new AppError('rate_limited', `more than ${FrameBudget.PER_SECOND} frames a second; this one was dropped`, {
            field: 'frame',
          }),
          clock.now(),
        ),
      );
    if (verdict === 'drop') return;
    const frame = parseFrame(String(data));
    if (!frame.success) return send(errorEvent(conversationId, frame.error, clock.now()));
    const parsed = frame.data;
    if (parsed.type === 'resync') return follow(parsed.lastEventId);
    if (parsed.type === 'ping') return send({ type: 'pong', ...clientOnly(conversationId, clock.now()) });
    if (!input)
      return send(
        errorEvent(
          conversationId,
          new AppError('forbidden', `type: ${parsed.type} needs the "write" scope; this socket may only read`, {
            field: 'type',
          }),
          clock.now(),
        ),
      );
    void input(parsed).then(
      (result) =>
        send({ type: 'ack', ...clientOnly(conversationId, clock.now()), data: { ref: parsed.ref ?? null, ...result } }),
      (error: unknown) => send(errorEvent(conversationId, error, clock.now())),
    );
  });
  socket.on('close', () => {
    closed = true;
    detach?.();
  });
  follow(cursor);
}

const POLICY_VIOLATION = 1008;

/**
 * How many frames a client may send: `PER_SECOND` in any one-second window are handled; the
 * first frame over is answered with an error, later ones are dropped silently, and a client far
 * over (ten times) is disconnected.
 */
class FrameBudget {
  static readonly PER_SECOND = 20;
  #windowStart = 0;
  #count = 0;

  take(now = Date.now()): 'ok' | 'refuse' | 'drop' | 'close' {
    if (now - this.#windowStart >= 1000) {
      this.#windowStart = now;
      this.#count = 0;
    }
    this.#count += 1;
    if (this.#count <= FrameBudget.PER_SECOND) return 'ok';
    if (this.#count === FrameBudget.PER_SECOND + 1) return 'refuse';
    return this.#count > FrameBudget.PER_SECOND * 10 ? 'close' : 'drop';
  }
}

function parseFrame(
  text: string,
): { success: true; data: z.output<typeof socketFrame> } | { success: false; error: AppError } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {
      success: false,
      error: new AppError(
        'invalid_frame',
        'the frame is not JSON; send {"type":"resync","lastEventId":n} or {"type":"ping"}',
        { field: 'frame' },
      ),
    };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const message = 'the frame must be a JSON object, such as {"type":"ping"}';
    return { success: false, error: new AppError('invalid_frame', message, { field: 'frame' }) };
  }
  const parsed = socketFrame.safeParse(value);
  if (parsed.success) return { success: true, data: parsed.data };
  const issue = parsed.error.issues[0];
  // An unknown key is named itself; a frame without a known `type` is about `type`.
  const field = issue?.path.length
    ? issue.path.join('.')
    : issue?.code === 'unrecognized_keys'
      ? issue.keys.join(', ')
      : 'type';
  return {
    success: false,
    error: new AppError('invalid_frame', `${field}: ${issue?.message ?? 'invalid frame'}`, { field }),
  };
}

/** Takes the response over from Fastify and starts a server-sent event stream on it (no proxy buffering). */
export function openEventStream(reply: FastifyReply): FastifyReply['raw'] {
  reply.hijack();
  reply.raw.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  return reply.raw;
}

export async function streamToSse(
  reply: FastifyReply,
  events: Pick<EventHub, 'attach'>,
  clock: Pick<Clock, 'now'>,
  conversationId: string,
  cursor: number | null,
): Promise<void> {
  const raw = openEventStream(reply);
  let closed = false;
  let detach: (() => void) | undefined;
  const stop = () => {
    closed = true;
    detach?.();
  };
  const send = (event: SessionEvent) => {
    if (closed) return;
    if (raw.writableLength > MAX_BUFFERED_BYTES) {
      stop();
      raw.destroy();
      return;
    }
    // A capped replay's resync points the client's resume cursor at where the replay stopped.
    const id = event.type === 'resync' ? (event.data.nextCursor ?? event.seq) : event.seq;
    raw.write(`id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    if (isGone(event)) {
      stop();
      raw.end();
    }
  };
  raw.on('close', stop);
  try {
    const unsubscribe = await events.attach(conversationId, cursor, send);
    if (closed) unsubscribe();
    else detach = unsubscribe;
  } catch (error) {
    raw.end(`event: error\ndata: ${JSON.stringify(errorEvent(conversationId, error, clock.now()))}\n\n`);
    raw.on('error', (streamError) => describeError(streamError));
  }
}
