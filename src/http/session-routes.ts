import { refuseReusedMessageId } from './inbound-routes.ts';
import { isBlank } from '../core/blank.ts';
import type {} from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Conversation } from '../core/domain.ts';
import { AppError } from '../core/errors.ts';
import type { Engine } from '../engine/engine.ts';
import type { InboundService } from '../engine/inbound-service.ts';
import type { ParticipantService } from '../engine/participant-service.ts';
import { conversationSummary } from '../events/conversation-summary.ts';
import type { EventHub } from '../events/event-hub.ts';
import { ResyncViews } from '../events/resync-view.ts';
import type { Clock } from '../core/clock.ts';
import type { Store } from '../store/store.ts';
import { principalOf, type Principal } from './auth.ts';
import { parseRequest } from './http-errors.ts';
import { jsonSchema, pageFields, turnsQuery } from './participant-schemas.ts';
import { ok, requirePhone, turnsJson } from './participant-routes.ts';
import type { PhoneRegion } from '../core/phone.ts';
import { spokenDigits } from '../core/spoken-digits.ts';
import { resource } from './resource.ts';
import { errorEvent, phoneText, streamToSocket, streamToSse, type Socket, type SocketInput } from './session-stream.ts';

export interface SessionRouteDeps {
  store: Store;
  /** "Now" for a flow's view of a conversation (the virtual clock in demos). */
  clock: Clock;
  /** National-format phone numbers (a caller's, a message's `phoneNumber`) are read in this region. */
  phoneRegion?: PhoneRegion | undefined;
  engine: Engine;
  participants: ParticipantService;
  inbound: InboundService;
  events: EventHub;
  model: { provider: string; model: string };
}

const tags = ['session stream'];
const params = z.strictObject({ id: z.string().min(1).max(100) });
// An empty `?lastEventId=` is no cursor at all (not 0, which would replay everything).
const cursorQuery = z.object({
  lastEventId: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.coerce.number().int().nonnegative().optional(),
  ),
  ticket: z.string().optional(),
});
/**
 * A web or voice session may send long text (a pasted document, a long transcript); flows cap
 * what they read (the assistant: 8,000 characters).
 */
export const MAX_SESSION_TEXT = 32_000;
const text = z
  .string()
  .trim()
  .max(MAX_SESSION_TEXT)
  .refine((value) => !isBlank(value), 'must contain text, not only spaces');
export const sessionMessageBody = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.enum(['text', 'final_transcript']),
    text,
    message_id: z.string().min(1).max(200).optional(),
    phoneNumber: phoneText.optional(),
  }),
  z.strictObject({ type: z.literal('partial_transcript'), text }),
  z.strictObject({ type: z.literal('barge_in') }),
]);
const resyncBody = z.strictObject({ lastEventId: z.number().int().nonnegative() });
const startBody = z.strictObject({
  flow: z.string().min(1).max(40),
  /** Who the session is for, when the operator knows: the flows that take it say which fields. */
  caller: z
    .strictObject({
      phone: phoneText.optional(),
      id: z
        .string()
        .regex(/^[\w.:@+-]{1,200}$/, 'must be 1-200 letters, digits or . _ : @ + -')
        .optional(),
    })
    .refine((caller) => caller.phone !== undefined || caller.id !== undefined, 'give caller.phone or caller.id')
    .optional(),
});
const sessionListQuery = z.strictObject({
  flow: z.string().min(1).max(40).optional(),
  ...pageFields,
});
/** Spec 004's API surface: the authoritative WebSocket, an SSE adapter, input, resync, summary. */
/**
 * Text typed into a conversation: as its participant's message when it has one, else (a web
 * session of the service desk or the assistant) as the conversation's own.
 */
export async function submitText(
  deps: Pick<SessionRouteDeps, 'participants' | 'inbound' | 'phoneRegion'>,
  conversation: Conversation,
  text: string,
  messageId: string | null,
  phoneNumber?: string,
) {
  // The phone is kept before the message is queued, so the turn that answers it reads it.
  if (phoneNumber !== undefined)
    await deps.participants.setCallerPhone(
      conversation,
      requirePhone(spokenDigits(phoneNumber), 'phoneNumber', deps.phoneRegion),
      'phoneNumber',
    );
  const participant = conversation.participantId ? await deps.participants.get(conversation.participantId) : undefined;
  return participant
    ? deps.inbound.receive({ channel: 'web', sender: participant.phoneNumber, text, channelMessageId: messageId })
    : deps.inbound.receiveForConversation(conversation, text, messageId);
}

/** `:id` is a conversation id, or a participant id standing for their conversation. */
export async function resolveConversation(
  deps: Pick<SessionRouteDeps, 'store' | 'participants'>,
  request: FastifyRequest,
): Promise<Conversation> {
  const { id } = parseRequest(params, request.params, 'params');
  return conversationById(deps, id, 'id');
}

/** A conversation by its id, or by the id of the participant it belongs to; 404 naming `field` when neither. */
export async function conversationById(
  deps: Pick<SessionRouteDeps, 'store' | 'participants'>,
  id: string,
  field: string,
): Promise<Conversation> {
  const direct = await deps.store.getConversation(id);
  if (direct) return direct;
  return deps.participants.conversationOf(id).catch(() => {
    throw new AppError('not_found', `no conversation or participant with id "${id}"`, { field });
  });
}

export function sessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  const conversationOf = (request: FastifyRequest) => resolveConversation(deps, request);
  // Every resync snapshot carries the flow's view of the conversation (the service desk's dialog).
  const views = new ResyncViews(deps.events, async (conversationId) => {
    const conversation = await deps.store.getConversation(conversationId);
    const flow = conversation && deps.participants.findFlowOf(conversation);
    if (!conversation || !flow?.sessionView) return null;
    return flow.sessionView(conversation, { store: deps.store, now: deps.clock.now() });
  });

  app.route({
    method: 'GET',
    url: '/api/conversations/:id/socket',
    config: { clientScopes: ['read'] },
    // Described by hand in the OpenAPI document (api-description.ts), as the GET a WebSocket starts with.
    schema: {
      hide: true,
      tags,
      summary: "WebSocket: the conversation's events (?lastEventId= to resume; ?ticket= for browsers)",
    },
    // A plain GET or HEAD (no Upgrade): the plugin's default is an empty 404, which reads as a
    // wrong path; say what the path is, in the error envelope every other route answers with.
    handler: async () => {
      throw new AppError(
        'invalid_request',
        'this path is a WebSocket: open it with Upgrade: websocket, ' +
          'or read GET /api/conversations/:id/stream (server-sent events)',
        { field: 'upgrade' },
      );
    },
    wsHandler: async (raw, request) => {
      const socket = raw as unknown as Socket;
      try {
        const conversation = await conversationOf(request);
        const { lastEventId } = parseRequest(cursorQuery, request.query, 'query');
        streamToSocket(
          socket,
          views,
          deps.clock,
          conversation.id,
          lastEventId ?? null,
          socketInput(deps, conversation, principalOf(request)),
        );
      } catch (error) {
        socket.send(JSON.stringify(errorEvent('', error, deps.clock.now())));
        socket.close(1008, 'bad request');
      }
    },
  });

  resource(app, '/api/conversations/:id/stream', {
    GET: {
      clientScopes: ['read'],
      schema: { tags, summary: 'Server-sent events: the same events, `id:` = seq, resumable with Last-Event-ID' },
      handler: async (request, reply) => {
        const conversation = await conversationOf(request);
        const { lastEventId } = parseRequest(cursorQuery, request.query, 'query');
        const header = request.headers['last-event-id'];
        const cursor = header !== undefined && /^\d+$/.test(String(header)) ? Number(header) : (lastEventId ?? null);
        await streamToSse(reply, views, deps.clock, conversation.id, cursor);
      },
    },
  });

  resource(app, '/api/conversations', {
    GET: {
      schema: {
        tags,
        summary:
          'Web sessions, newest first (?flow=, ?limit=, ?offset=): flow, state, created at, last activity; ' +
          'total and a next link',
        querystring: jsonSchema(sessionListQuery),
      },
      handler: async (request, reply) => {
        const query = parseRequest(sessionListQuery, request.query, 'query');
        if (query.flow) deps.participants.requireFlow(query.flow); // a typo is not an empty list
        const { sessions, total } = await deps.store.listSessions(query);
        const nextOffset = query.offset + sessions.length;
        const params = new URLSearchParams({
          limit: String(query.limit),
          offset: String(nextOffset),
          ...(query.flow ? { flow: query.flow } : {}),
        });
        const next = nextOffset < total ? `/api/conversations?${params}` : null;
        if (next) void reply.header('link', `<${next}>; rel="next"`);
        const result = sessions.map((session) => ({
          id: session.id,
          flow: session.flow,
          state: session.state,
          created_at: session.createdAt.toISOString(),
          last_activity_at: session.lastActivityAt.toISOString(),
        }));
        return { ...ok(undefined, result), total, limit: query.limit, offset: query.offset, next };
      },
    },
    POST: {
      schema: {
        tags,
        summary:
          'Start a web session of a flow that needs no participant (the service desk, the assistant), with who it ' +
          'is for when known (caller.phone, caller.id); answers its id',
        body: jsonSchema(startBody),
      },
      handler: async (request, reply) => {
        const body = parseRequest(startBody, request.body ?? {}, 'body');
        const phone = body.caller?.phone;
        const conversation = await deps.participants.startSession(body.flow, {
          phone: phone === undefined ? undefined : requirePhone(spokenDigits(phone), 'caller.phone', deps.phoneRegion),
          id: body.caller?.id,
        });
        return reply.status(201).send(
          ok('Conversation started', {
            id: conversation.id,
            flow: conversation.flow,
            state: conversation.state,
            channel: conversation.channel,
          }),
        );
      },
    },
  });

  resource(app, '/api/conversations/:id/message', {
    POST: {
      clientScopes: ['write'],
      schema: {
        tags,
        summary: 'Input: a text or final transcript (starts a turn), a partial transcript (UI only) or a barge-in',
        body: jsonSchema(sessionMessageBody),
      },
      handler: async (request, reply) => {
        const conversation = await conversationOf(request);
        const body = parseRequest(sessionMessageBody, withDefaultType(request.body), 'body');
        const callSessionId = conversation.id;
        if (body.type === 'barge_in')
          return { ok: true, callSessionId, interrupted: deps.engine.interrupt(conversation.id) };
        if (body.type === 'partial_transcript') {
          // Persisted in the event log: redacted like any input of the conversation's flow.
          const redact = deps.participants.findFlowOf(conversation)?.redactInput ?? ((text: string) => text);
          await deps.events.emit(conversation.id, {
            type: 'status',
            role: 'system',
            text: redact(body.text),
            data: { phase: 'partial_transcript' },
          });
          return { ok: true, callSessionId };
        }
        const outcome = await submitText(deps, conversation, body.text, body.message_id ?? null, body.phoneNumber);
        refuseReusedMessageId(outcome, body.message_id);
        return reply
          .status(202)
          .send({ ok: true, callSessionId, inboxId: outcome.inboxId, duplicate: outcome.duplicate });
      },
    },
  });

  resource(app, '/api/conversations/:id/resync', {
    POST: {
      clientScopes: ['read'],
      schema: {
        tags,
        summary: 'Replay the events after lastEventId (at most 200), then a resync snapshot',
        body: jsonSchema(resyncBody),
      },
      handler: async (request) => {
        const conversation = await conversationOf(request);
        const { lastEventId } = parseRequest(resyncBody, request.body, 'body');
        return ok(undefined, await views.replay(conversation.id, lastEventId));
      },
    },
  });

  resource(app, '/api/conversations/:id/turns', {
    GET: {
      schema: {
        tags,
        summary: "Recent turns with their tool calls (arguments, results, durations): a web session's audit",
        querystring: jsonSchema(turnsQuery),
      },
      handler: async (request) => {
        const { limit } = parseRequest(turnsQuery, request.query, 'query');
        const conversation = await conversationOf(request);
        return ok(undefined, await turnsJson(deps.store, conversation.id, limit));
      },
    },
  });

  resource(app, '/api/conversations/:id/summary', {
    GET: {
      schema: {
        tags,
        summary: 'A markdown account of the conversation: turns, model and tool calls, latency, state changes',
      },
      handler: async (request, reply) => {
        const conversation = await conversationOf(request);
        const { store } = deps;
        const [participant, turns, toolCalls, messages] = await Promise.all([
          conversation.participantId ? store.getParticipant(conversation.participantId) : undefined,
          store.listTurns(conversation.id),
          store.listToolCalls(conversation.id),
          store.listMessages(conversation.id),
        ]);
        const markdown = conversationSummary({
          conversation,
          participant: participant ?? null,
          turns,
          toolCalls,
          messages,
          model: deps.model,
        });
        return reply.type('text/markdown; charset=utf-8').send(markdown);
      },
    },
  });
}

/** `{"text": "hi"}` means a text message. */
function withDefaultType(body: unknown): unknown {
  return body && typeof body === 'object' && !Array.isArray(body) && !('type' in body)
    ? { ...body, type: 'text' }
    : body;
}

/** What a socket's principal may send: the operator and a client token with "write" may; a ticket only reads. */
function socketInput(deps: SessionRouteDeps, conversation: Conversation, principal: Principal): SocketInput {
  const canWrite = principal.kind === 'admin' || (principal.kind === 'client' && principal.scopes.includes('write'));
  if (!canWrite) return undefined;
  return async (frame) => {
    if (frame.type === 'barge_in') return { interrupted: deps.engine.interrupt(conversation.id) };
    const outcome = await submitText(deps, conversation, frame.text, frame.message_id ?? null, frame.phoneNumber);
    refuseReusedMessageId(outcome, frame.message_id);
    return { inboxId: outcome.inboxId, duplicate: outcome.duplicate };
  };
}
