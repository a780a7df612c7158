import { createHash, randomUUID } from 'node:crypto';
import { isBlank } from '../core/blank.ts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { AppError, describeError } from '../core/errors.ts';
import type { SessionEvent } from '../events/session-event.ts';
import { parseRequest } from './http-errors.ts';
import { jsonSchema } from './participant-schemas.ts';
import { resource } from './resource.ts';
import type { SessionRouteDeps } from './session-routes.ts';
import { MAX_SESSION_TEXT, resolveConversation, submitText } from './session-routes.ts';

/**
 * The request `useChat` (Vercel AI SDK UI, `HttpChatTransport.sendMessages`) sends: the whole message
 * list; we answer its last user message. `trigger` is `submit-message` (a new or edited message, whose
 * id `messageId` names when edited) or `regenerate-message` (`regenerate()`: the SDK drops the reply
 * to redo, which `messageId` names when the caller gave one, so the list ends with the user message).
 */
const uiChatBody = z.looseObject({
  id: z.string().min(1).max(200).optional(),
  trigger: z.enum(['submit-message', 'regenerate-message']).optional(),
  messageId: z.string().min(1).max(200).optional(),
  messages: z
    .array(
      z.looseObject({
        id: z.string().min(1).max(200),
        role: z.enum(['system', 'user', 'assistant']),
        parts: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
      }),
    )
    .min(1),
});

const UI_STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};

/**
 * The AI SDK UI message stream protocol over the session stream: a React app using `useChat`
 * (with `DefaultChatTransport({ api: '/api/conversations/<id>/chat' })`) talks to a conversation.
 * The turn runs through the inbox like any other message; its events become UI chunks.
 */
export function uiStreamRoute(app: FastifyInstance, deps: SessionRouteDeps): void {
  resource(app, '/api/conversations/:id/chat', {
    POST: {
      // It posts a message and streams the reply: both.
      clientScopes: ['read', 'write'],
      // useChat sends back every message it has seen; the last one's text is recorded with U+0000 replaced.
      keepsNul: true,
      schema: {
        tags: ['session stream'],
        summary: 'Vercel AI SDK UI message stream (useChat): answers the last user message',
        body: jsonSchema(uiChatBody),
      },
      handler: async (request, reply) => {
        const conversation = await resolveConversation(deps, request);
        const body = parseRequest(uiChatBody, request.body, 'body');
        const last = body.messages.at(-1)!;
        const text = last.parts
          .filter((part) => part.type === 'text')
          .map((part) => part.text ?? '')
          .join('')
          .trim();
        if (last.role !== 'user' || isBlank(text))
          throw new AppError('invalid_request', 'messages: the last message must be a user message with text', {
            field: 'messages',
          });
        if (text.length > MAX_SESSION_TEXT)
          throw new AppError(
            'invalid_request',
            `messages: the last message is longer than ${MAX_SESSION_TEXT} characters`,
            { field: 'messages' },
          );
        // The message id with its text: a retried request (same id, same text) is answered once, and
        // a message edited in the chat (the SDK resends it under its id) is a new message to answer.
        const key = `ui:${body.id ?? conversation.id}:${last.id}:${digest(text)}`;
        // Regenerate asks the message again, recorded as a new message and turn after the earlier
        // reply, which stays (decision 008). Its key is new every time: the SDK sends the same body at
        // every click (the reply it replaces is left out), so no key could tell a second click from
        // a retried request, and a click must be answered.
        const channelMessageId = body.trigger === 'regenerate-message' ? `${key}:regenerate:${randomUUID()}` : key;
        await streamTurn(reply, deps, conversation.id, () => submitText(deps, conversation, text, channelMessageId));
      },
    },
  });
}

async function streamTurn(
  reply: FastifyReply,
  deps: SessionRouteDeps,
  conversationId: string,
  submit: () => ReturnType<SessionRouteDeps['inbound']['receive']>,
): Promise<void> {
  const writer = new UiChunkWriter(reply);
  // Listen before submitting, so nothing of the turn is missed; sort out which turn is ours after.
  const turnsByInbox = new Map<string, number>();
  const seen: SessionEvent[] = [];
  let ours: number | null = null;
  let inboxId: string | null = null;
  const offTurn = deps.events.onTurn(conversationId, ({ turnNo, inboxId: answered }) => {
    if (answered) turnsByInbox.set(answered, turnNo);
    if (answered && answered === inboxId) ours = turnNo;
  });
  const offEvents = deps.events.subscribe(conversationId, (event) =>
    ours === null ? seen.push(event) : event.turnId === ours && writer.event(event),
  );
  try {
    const outcome = await submit();
    inboxId = outcome.inboxId;
    ours = turnsByInbox.get(inboxId) ?? null;
    if (ours !== null) for (const event of seen.filter((e) => e.turnId === ours)) writer.event(event);
    writer.start();
    if (outcome.status === 'queued') await outcome.turn;
    // The same message again (a retried request): answer with what was already replied to it.
    if (outcome.duplicate && ours === null)
      for (const answer of await answersTo(deps, conversationId, inboxId)) writer.text(answer.id, answer.text);
    writer.finish();
  } catch (error) {
    writer.error(describeError(error));
  } finally {
    offTurn();
    offEvents();
  }
}

/** How long a retried request waits for the first one's turn to finish before it gives up. */
const RETRY_WAIT_MS = 60_000;

/**
 * The assistant messages of the turn that answered an inbox item, once it is answered (a retry
 * that arrives while the first request's turn still runs waits for it, up to a minute).
 */
async function answersTo(
  deps: SessionRouteDeps,
  conversationId: string,
  inboxId: string,
): Promise<Array<{ id: string; text: string }>> {
  const deadline = Date.now() + RETRY_WAIT_MS;
  while ((await deps.store.getInbox(inboxId))?.status === 'pending' && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const turn = (await deps.store.listTurns(conversationId, { limit: 200 })).findLast(
    (candidate) => candidate.inboxId === inboxId && candidate.status === 'completed',
  );
  if (!turn) return [];
  const messages = await deps.store.listMessages(conversationId, { limit: 200 });
  return messages
    .filter((message) => message.turnId === turn.id && message.role === 'assistant')
    .map((message) => ({
      id: message.id,
      text: message.poll ? pollText(message.text, message.poll.options) : message.text,
    }));
}

/** Writes UI message chunks in the order the protocol requires (start, text-start before deltas, ...). */
class UiChunkWriter {
  readonly #reply: FastifyReply;
  #started = false;
  #ended = false;
  readonly #open = new Set<string>();
  readonly #done = new Set<string>();

  constructor(reply: FastifyReply) {
    this.#reply = reply;
    reply.hijack();
    reply.raw.writeHead(200, UI_STREAM_HEADERS);
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#write({ type: 'start' });
  }

  event(event: SessionEvent): void {
    this.start();
    if (event.type === 'token' && event.messageId) {
      this.#textStart(event.messageId);
      this.#write({ type: 'text-delta', id: event.messageId, delta: event.text });
    } else if (event.type === 'status') {
      this.#write({
        type: 'data-status',
        data: { text: event.text, correlationId: event.correlationId },
        transient: true,
      });
    } else if (
      event.type === 'final' &&
      event.messageId &&
      event.role === 'assistant' &&
      !this.#done.has(event.messageId)
    ) {
      if (!this.#open.has(event.messageId)) {
        this.#textStart(event.messageId);
        this.#write({
          type: 'text-delta',
          id: event.messageId,
          delta: event.data.poll ? pollText(event.text, event.data.poll.options) : event.text,
        });
      }
      this.#textEnd(event.messageId);
    }
  }

  /** A whole text message at once (one already stored). */
  text(id: string, text: string): void {
    this.start();
    this.#textStart(id);
    this.#write({ type: 'text-delta', id, delta: text });
    this.#textEnd(id);
  }

  finish(): void {
    this.start();
    for (const id of this.#open) this.#textEnd(id);
    this.#write({ type: 'finish' });
    this.#end();
  }

  error(message: string): void {
    this.start();
    this.#write({ type: 'error', errorText: message });
    this.#end();
  }

  #textStart(id: string): void {
    if (this.#open.has(id) || this.#done.has(id)) return;
    this.#open.add(id);
    this.#write({ type: 'text-start', id });
  }

  #textEnd(id: string): void {
    if (!this.#open.delete(id)) return;
    this.#done.add(id);
    this.#write({ type: 'text-end', id });
  }

  #write(chunk: object): void {
    if (!this.#ended) this.#reply.raw.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }

  #end(): void {
    if (this.#ended) return;
    this.#reply.raw.write('data: [DONE]\n\n');
    this.#ended = true;
    this.#reply.raw.end();
  }
}

const pollText = (question: string, options: string[]) =>
  `${question}\n${options.map((option, index) => `${index + 1}. ${option}`).join('\n')}`;

/** A short fingerprint of a message's text (64 bits of its SHA-256). */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
