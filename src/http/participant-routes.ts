import type { FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { AppError } from '../core/errors.ts';
import { canonicalPhone, phoneExtension, type PhoneRegion } from '../core/phone.ts';
import { canonicalTimeZone } from '../core/time-zone.ts';
import type { ParticipantService } from '../engine/participant-service.ts';
import type { EventHub } from '../events/event-hub.ts';
import { conversationGone } from './session-stream.ts';
import { participantTimerQueries } from '../store/participant-timers-queries.ts';
import type { Store } from '../store/store.ts';
import { z } from 'zod';
import { parseRequest } from './http-errors.ts';
import { COLUMNS as IMPORT_COLUMNS, phonesOf, readParticipantImport } from './participant-import.ts';
import {
  deliveryJson,
  enrollmentBody,
  forceStateBody,
  historyQuery,
  jsonSchema,
  listQuery,
  messageJson,
  participantJson,
  participantParams,
  participantUpdateBody,
  profileJson,
  scheduleJson,
  timerJson,
  turnJson,
  turnsQuery,
} from './participant-schemas.ts';
import { resource } from './resource.ts';

export interface ParticipantRouteDeps {
  participants: ParticipantService;
  store: Store;
  /** Told when a participant's conversation is deleted, for its live streams. */
  events: Pick<EventHub, 'end'>;
  /** The conversations' clock (the virtual one in demos). */
  clock: Pick<Clock, 'now'>;
  /** National-format numbers are read in this region; undefined = international only. */
  phoneRegion?: PhoneRegion | undefined;
}

const tags = ['participants'];
/** A CSV of a few thousand participants fits; 10 MB of anything is refused with 413. */
const MAX_IMPORT_BYTES = 2 * 1024 * 1024;
const importQuery = z.strictObject({
  dry_run: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
});

export function participantRoutes(app: FastifyInstance, deps: ParticipantRouteDeps): void {
  const { participants, store } = deps;
  const timers = store.extend(participantTimerQueries).ops;

  resource(app, '/conversation/participants', {
    POST: {
      schema: {
        tags,
        summary: 'Enrol a participant; the greeting turn runs right after',
        body: jsonSchema(enrollmentBody),
      },
      handler: async (request, reply) => {
        const body = parseRequest(enrollmentBody, request.body, 'body');
        const { participant } = await participants.enroll({
          ...body,
          phoneNumber: requirePhone(body.phone_number, 'phone_number', deps.phoneRegion),
          timezone: checkTimeZone(body.timezone),
        });
        return reply
          .status(201)
          .send(ok('Conversation participant enrolled successfully', participantJson(participant)));
      },
    },
    GET: {
      schema: {
        tags,
        summary: 'List participants, a page at a time (total, and a next link while there is more)',
        querystring: jsonSchema(listQuery),
      },
      handler: async (request, reply) => {
        const query = parseRequest(listQuery, request.query, 'query');
        const { participants: list, total } = await participants.list(query);
        const conversations = await Promise.all(
          list.map((participant) => store.findConversationByParticipant(participant.id)),
        );
        const nextOffset = query.offset + list.length;
        // The page is the whole answer only when it says so: a client sees the total and where to go on.
        const next = nextOffset < total ? `/conversation/participants?${pageQuery(query, nextOffset)}` : null;
        if (next) void reply.header('link', `<${next}>; rel="next"`);
        return {
          ...ok(
            undefined,
            list.map((participant, index) => ({
              ...participantJson(participant),
              conversation_id: conversations[index]?.id ?? null,
              sub_state: conversations[index]?.subState ?? null,
            })),
          ),
          total,
          limit: query.limit,
          offset: query.offset,
          next,
        };
      },
    },
  });

  // A spreadsheet's "Save as CSV": read as text here, as CSV by the import.
  app.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: MAX_IMPORT_BYTES }, (_request, body, done) =>
    done(null, body),
  );
  resource(app, '/conversation/participants/import', {
    POST: {
      schema: {
        tags,
        summary:
          `Enrol everyone in a CSV file (text/csv; header phone_number plus any of ` +
          `${IMPORT_COLUMNS.slice(1).join(', ')}), all or none; ?dry_run=true only checks. ` +
          '400 lists every problem (row, field, message)',
        querystring: jsonSchema(importQuery),
      },
      handler: async (request, reply) => {
        const query = parseRequest(importQuery, request.query, 'query');
        if (typeof request.body !== 'string')
          throw new AppError('unsupported_media_type', 'send the file as text/csv', { field: 'content-type' });
        const taken = new Set<string>();
        for (const phone of phonesOf(request.body, deps.phoneRegion))
          if (await store.findParticipantByPhone(phone)) taken.add(phone);
        const { rows, problems } = readParticipantImport(request.body, { region: deps.phoneRegion, taken });
        if (problems.length > 0) {
          return reply.status(400).send({
            status: 'error',
            code: 'invalid_request',
            field: 'body',
            message: `${problems.length} problem(s) in the file; nothing was enrolled`,
            problems,
          });
        }
        if (query.dry_run)
          return ok(`${rows.length} participant(s) would be enrolled; nothing was enrolled (dry run)`, {
            would_enroll: rows.length,
            dry_run: true,
          });
        const enrolled = await participants.enrollMany(rows);
        return reply.status(201).send(
          ok(`${enrolled.length} participant(s) enrolled; their greetings go out one after another`, {
            ids: enrolled.map((participant) => participant.id),
          }),
        );
      },
    },
  });

  resource(app, '/conversation/participants/:id', {
    GET: {
      schema: { tags, summary: 'Get a participant', params: jsonSchema(participantParams) },
      handler: async (request) => ok(undefined, participantJson(await participants.get(idOf(request.params)))),
    },
    PUT: {
      schema: {
        tags,
        summary: 'Update a participant (partial)',
        params: jsonSchema(participantParams),
        body: jsonSchema(participantUpdateBody),
      },
      handler: async (request) => {
        const id = idOf(request.params);
        const body = parseRequest(participantUpdateBody, request.body, 'body');
        const patch = { ...body, ...(body.timezone !== undefined ? { timezone: checkTimeZone(body.timezone) } : {}) };
        return ok('Participant updated successfully', participantJson(await participants.update(id, patch)));
      },
    },
    DELETE: {
      schema: {
        tags,
        summary: 'Unenrol: remove their personal data (their conversations and sessions with it), then send a goodbye',
        params: jsonSchema(participantParams),
      },
      handler: async (request) => {
        const conversations = await participants.remove(idOf(request.params));
        // Their live streams, in every process, are told and closed: they would otherwise wait for ever.
        for (const conversationId of conversations)
          deps.events.end(conversationId, conversationGone(conversationId, deps.clock.now()));
        return ok('Participant deleted successfully');
      },
    },
  });

  resource(app, '/conversation/participants/:id/history', {
    GET: {
      schema: {
        tags,
        summary: 'The last 50 messages, or the whole transcript with ?all=true',
        params: jsonSchema(participantParams),
        querystring: jsonSchema(historyQuery),
      },
      handler: async (request) => {
        const id = idOf(request.params);
        const { all } = parseRequest(historyQuery, request.query, 'query');
        const conversation = await participants.conversationOf(id);
        const messages = await store.listMessages(conversation.id, all ? {} : { limit: 50 });
        return ok(undefined, {
          participant_id: id,
          conversation_id: conversation.id,
          messages: messages.map(messageJson),
        });
      },
    },
  });

  resource(app, '/conversation/participants/:id/turns', {
    GET: {
      schema: {
        tags,
        summary: 'Recent turns with their tool calls (arguments, results, durations)',
        params: jsonSchema(participantParams),
        querystring: jsonSchema(turnsQuery),
      },
      handler: async (request) => {
        const { limit } = parseRequest(turnsQuery, request.query, 'query');
        const conversation = await participants.conversationOf(idOf(request.params));
        return ok(undefined, await turnsJson(store, conversation.id, limit));
      },
    },
  });

  resource(app, '/conversation/participants/:id/timers', {
    GET: {
      schema: {
        tags,
        summary: "Pending timers (kind, due time, key): the flow's, and the participant's POST /schedule series",
        params: jsonSchema(participantParams),
      },
      handler: async (request) => {
        const id = idOf(request.params);
        const conversation = await participants.conversationOf(id);
        return ok(undefined, (await timers.pendingTimersOf(id, conversation.id)).map(timerJson));
      },
    },
  });

  resource(app, '/conversation/participants/:id/deliveries', {
    GET: {
      schema: {
        tags,
        summary: 'Outbound messages as the channel saw them: attempts, provider id, delivery status from receipts',
        params: jsonSchema(participantParams),
      },
      handler: async (request) => {
        const conversation = await participants.conversationOf(idOf(request.params));
        return ok(undefined, (await store.listOutbox(conversation.id)).map(deliveryJson));
      },
    },
  });

  resource(app, '/conversation/participants/:id/state', {
    POST: {
      schema: {
        tags,
        summary: 'Force the sub-state (operator override, audited)',
        params: jsonSchema(participantParams),
        body: jsonSchema(forceStateBody),
      },
      handler: async (request) => {
        const id = idOf(request.params);
        const body = parseRequest(forceStateBody, request.body, 'body');
        const conversation = await participants.forceSubState(id, body.sub_state, body.reason);
        return ok('Sub-state changed', {
          participant_id: id,
          state: conversation.state,
          sub_state: conversation.subState,
          version: conversation.version,
        });
      },
    },
    GET: {
      schema: {
        tags,
        summary: 'Top-level state, sub-state, profile and pending timers',
        params: jsonSchema(participantParams),
      },
      handler: async (request) => {
        const id = idOf(request.params);
        const participant = await participants.get(id);
        const conversation = await participants.conversationOf(id);
        const [profile, schedules, pending] = await Promise.all([
          store.getProfile(id),
          store.listSchedules(id),
          timers.pendingTimersOf(id, conversation.id),
        ]);
        return ok(undefined, {
          participant_id: participant.id,
          conversation_id: conversation.id,
          channel: conversation.channel,
          status: participant.status,
          state: conversation.state,
          sub_state: conversation.subState,
          sub_states: participants.flowOf(conversation).subStates,
          version: conversation.version,
          profile: profile ? profileJson(profile) : null,
          schedules: schedules.map(scheduleJson),
          pending_timers: pending.map(timerJson),
        });
      },
    },
  });
}

/** The list query for another page: the same filters, another offset. */
function pageQuery(query: { status?: string; cohort?: string; limit: number }, offset: number): string {
  const params = new URLSearchParams({ limit: String(query.limit), offset: String(offset) });
  if (query.status) params.set('status', query.status);
  if (query.cohort) params.set('cohort', query.cohort);
  return params.toString();
}

function ok(message: string | undefined, result?: unknown) {
  return { status: 'ok' as const, ...(message ? { message } : {}), ...(result !== undefined ? { result } : {}) };
}

function idOf(params: unknown): string {
  return parseRequest(participantParams, params, 'params').id;
}

export function requirePhone(raw: string, field: string, region: PhoneRegion | undefined): string {
  const phone = canonicalPhone(raw, region);
  if (!phone) {
    const extension = phoneExtension(raw);
    if (extension !== undefined)
      throw new AppError(
        'invalid_phone_number',
        `${field}: "${raw}" has an extension (${extension}): messages reach a number, not an extension`,
        { field },
      );
    const expected = region
      ? `an international (+14165550123) or ${region} national number`
      : 'a number in international format (E.164, e.g. +14165550123; set DEFAULT_PHONE_REGION to accept ' +
        'national formats)';
    throw new AppError('invalid_phone_number', `${field}: "${raw}" is not a valid phone number: expected ${expected}`, {
      field,
    });
  }
  return phone;
}

/** The zone in its canonical spelling (`america/toronto` → `America/Toronto`). */
function checkTimeZone(zone: string | null | undefined): string | null {
  if (zone === undefined || zone === null || zone.trim() === '') return null;
  const canonical = canonicalTimeZone(zone);
  if (!canonical) {
    throw new AppError('invalid_timezone', `timezone: "${zone}" is not an IANA time zone (e.g. America/Toronto)`, {
      field: 'timezone',
    });
  }
  return canonical;
}

export { ok };

/** A conversation's most recent turns, each with its tool calls, as the API shows them. */
export async function turnsJson(
  store: Pick<Store, 'listTurns' | 'listToolCalls'>,
  conversationId: string,
  limit: number,
) {
  const turns = await store.listTurns(conversationId, { limit });
  // Only the listed turns' calls: a long conversation's whole audit is not read for its last few.
  const calls = await store.listToolCalls(conversationId, { turnIds: turns.map((turn) => turn.id) });
  return turns.map((turn) =>
    turnJson(
      turn,
      calls.filter((call) => call.turnId === turn.id),
    ),
  );
}
