import type { FastifyInstance } from 'fastify';
import type { Clock, IdGenerator } from '../../core/clock.ts';
import type { Engine } from '../../engine/engine.ts';
import type { ParticipantService } from '../../engine/participant-service.ts';
import type { Store } from '../../store/store.ts';
import { parseRequest } from '../http-errors.ts';
import { jsonSchema } from '../participant-schemas.ts';
import { ok } from '../participant-routes.ts';
import { resource } from '../resource.ts';
import { goResponseBody } from './go-schemas.ts';
import type { GoResponse, PlatformQueries } from './platform-queries.ts';
import { tags, type Recipient } from './platform-deps.ts';

interface RecordDeps {
  store: Store;
  engine: Pick<Engine, 'exclusive'>;
  participants: Pick<ParticipantService, 'findFlowOf'>;
  ids: IdGenerator;
  clock: Clock;
  queries: PlatformQueries;
  recipientOf: (raw: string, field: string) => Promise<Recipient>;
}

/** Go's `GET /stats`: responses, per sender, and their mean length in bytes (Go's `len`). */
export function responseStats(responses: readonly GoResponse[]) {
  const perSender: Record<string, number> = {};
  let bytes = 0;
  for (const response of responses) {
    perSender[response.from] = (perSender[response.from] ?? 0) + 1;
    bytes += Buffer.byteLength(response.body, 'utf8');
  }
  return {
    total_responses: responses.length,
    responses_per_sender: perSender,
    avg_response_length: responses.length > 0 ? bytes / responses.length : 0,
  };
}

/** Go's receipts, responses and stats, read from the outbox and the transcripts. */
export function recordRoutes(app: FastifyInstance, deps: RecordDeps): void {
  resource(app, '/receipts', {
    GET: {
      schema: {
        tags,
        summary:
          'Go PromptPipe: every send to a participant (sent, or failed) and what the channel reported ' +
          '(delivered, read, failed), oldest first; time in Unix seconds',
      },
      handler: async () => ok(undefined, await deps.queries.receipts()),
    },
  });
  resource(app, '/response', {
    POST: {
      schema: {
        tags,
        summary:
          "Go PromptPipe: record a participant's reply in their transcript (the time is the server's); it is " +
          'not answered: POST /conversation/inbound is',
        body: jsonSchema(goResponseBody),
      },
      handler: async (request, reply) => {
        const body = parseRequest(goResponseBody, request.body, 'body');
        await recordResponse(deps, await deps.recipientOf(body.from, 'from'), body.body);
        return reply.status(201).send(ok('Response recorded successfully'));
      },
    },
  });
  resource(app, '/responses', {
    GET: {
      schema: { tags, summary: "Go PromptPipe: every participant's replies, oldest first; time in Unix seconds" },
      handler: async () => ok(undefined, await deps.queries.responses()),
    },
  });
  resource(app, '/stats', {
    GET: {
      schema: { tags, summary: 'Go PromptPipe: how many replies, per sender, and their mean length in bytes' },
      handler: async () => ok(undefined, responseStats(await deps.queries.responses())),
    },
  });
}

/** A reply appended to the transcript in the conversation's queue, redacted as the flow redacts input. */
async function recordResponse(deps: RecordDeps, { conversation }: Recipient, text: string): Promise<void> {
  const redact = deps.participants.findFlowOf(conversation)?.redactInput;
  await deps.engine.exclusive(conversation.id, () =>
    deps.store.appendMessages([
      {
        id: deps.ids.next('msg'),
        conversationId: conversation.id,
        role: 'user',
        kind: 'text',
        text: redact?.(text) ?? text,
        poll: null,
        source: 'participant',
        turnId: null,
        createdAt: deps.clock.now(),
      },
    ]),
  );
}
