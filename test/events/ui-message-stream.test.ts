import {
  AbstractChat,
  DefaultChatTransport,
  readUIMessageStream,
  type ChatState,
  type ChatStatus,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const PHONE = '+14165550195';

async function start() {
  const provider = createScriptedProvider((request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return { text: 'Walking it is. I saved that.', streamDelayMs: 30 };
    if (last.content.startsWith('[')) return { text: 'Hi!' };
    return { toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'walking' } }] };
  });
  server = await startTestServer({}, { provider });
  const created = await server.request('POST', '/conversation/participants', { phone_number: PHONE });
  await waitFor(() => server!.sink.to(PHONE).length >= 1, { what: 'greeting' });
  return created.body.result.id as string;
}

const userMessage = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

/** Sends like `useChat` does (the SDK's own transport) and reads the reply with the SDK's own parser. */
async function chat(participantId: string, messages: UIMessage[]) {
  const transport = new DefaultChatTransport({ api: `${server!.url}/api/conversations/${participantId}/chat` });
  const stream = await transport.sendMessages({
    trigger: 'submit-message',
    chatId: participantId,
    messageId: undefined,
    messages,
    abortSignal: undefined,
  });
  const [forMessage, forChunks] = stream.tee();
  const chunks: UIMessageChunk[] = [];
  const collecting = (async () => {
    for await (const chunk of forChunks as unknown as AsyncIterable<UIMessageChunk>) chunks.push(chunk);
  })();
  let message: UIMessage | undefined;
  for await (const snapshot of readUIMessageStream({ stream: forMessage, terminateOnError: true })) message = snapshot;
  await collecting;
  return { message, chunks };
}

/** `useChat` without React: the SDK's own chat (its `sendMessage` and `regenerate`) over plain state. */
class MemoryChat extends AbstractChat<UIMessage> {
  constructor(id: string, transport: DefaultChatTransport<UIMessage>) {
    const state: ChatState<UIMessage> = {
      status: 'ready' as ChatStatus,
      error: undefined,
      messages: [],
      pushMessage: (message) => void state.messages.push(message),
      popMessage: () => void state.messages.pop(),
      replaceMessage: (index, message) => void (state.messages[index] = message),
      snapshot: (thing) => structuredClone(thing),
    };
    super({ id, transport, state });
  }
}

const textOf = (message: UIMessage) =>
  message.parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');

describe('AI SDK UI message stream (useChat)', () => {
  it('answers the last user message as a UI message stream the SDK parses', async () => {
    const id = await start();
    const response = await fetch(`${server!.url}/api/conversations/${id}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, messages: [userMessage('u0', 'ping')] }),
    });
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    await response.text();

    const { message, chunks } = await chat(id, [userMessage('u1', 'I want to walk')]);
    const text = message!.parts
      .filter((part) => part.type === 'text')
      .map((part) => part.text)
      .join('\n');
    expect(text).toBe('Walking it is. I saved that.');
    const types = chunks
      .map((chunk) => chunk.type)
      .filter((type, index, all) => type !== 'text-delta' || all[index - 1] !== 'text-delta');
    expect(types).toEqual(['start', 'data-status', 'data-status', 'text-start', 'text-delta', 'text-end', 'finish']);
    const history = (await server!.request('GET', `/conversation/participants/${id}/history`)).body.result.messages;
    expect(history.at(-2)).toMatchObject({ role: 'user', text: 'I want to walk' });
  });

  it('talks to a web session that has no participant (the assistant)', async () => {
    server = await startTestServer(
      {},
      {
        provider: createScriptedProvider((request) => ({
          text: request.messages.at(-1)!.content.startsWith('[') ? 'Hi!' : 'Six times seven is 42.',
        })),
      },
    );
    const id = (await server.request('POST', '/api/conversations', { flow: 'assistant' })).body.result.id as string;
    const { message } = await chat(id, [userMessage('u1', 'what is 6 * 7? mail me at jo@example.com')]);
    expect(
      message!.parts
        .filter((part) => part.type === 'text')
        .map((part) => part.text)
        .join(''),
    ).toBe('Six times seven is 42.');
    const stored = (await server.store.listMessages(id)).filter((m) => m.role === 'user');
    expect(stored.map((m) => m.text)).toEqual(['what is 6 * 7? mail me at [email]']);

    // The same message again (a retried request): the stored answer, no second turn.
    const again = await chat(id, [userMessage('u1', 'what is 6 * 7? mail me at jo@example.com')]);
    expect(
      again
        .message!.parts.filter((part) => part.type === 'text')
        .map((part) => part.text)
        .join(''),
    ).toBe('Six times seven is 42.');
    expect((await server.store.listMessages(id)).filter((m) => m.role === 'user')).toHaveLength(1);

    // The message edited in the chat: the SDK resends it under its id, with the new text, which is
    // answered (it was answered with the old text's reply, and never recorded).
    const edited = await chat(id, [userMessage('u1', 'what is 3 * 3?')]);
    expect(edited.message!.parts.some((part) => part.type === 'text')).toBe(true);
    await chat(id, [userMessage('u1', 'what is 3 * 3?')]);
    const users = (await server.store.listMessages(id)).filter((m) => m.role === 'user').map((m) => m.text);
    expect(users).toEqual(['what is 6 * 7? mail me at [email]', 'what is 3 * 3?']);
  });

  it('a retry sent while the first request is still being answered gets the same answer', async () => {
    server = await startTestServer(
      {},
      {
        provider: createScriptedProvider((request) =>
          request.messages.at(-1)!.content.startsWith('[') ? { text: 'Hi!' } : { text: 'Slow but sure.', delayMs: 400 },
        ),
      },
    );
    const id = (await server.request('POST', '/api/conversations', { flow: 'assistant' })).body.result.id as string;
    const text = (reply: Awaited<ReturnType<typeof chat>>) =>
      reply
        .message!.parts.filter((part) => part.type === 'text')
        .map((part) => part.text)
        .join('');
    const [first, retry] = await Promise.all([
      chat(id, [userMessage('u1', 'take your time')]),
      chat(id, [userMessage('u1', 'take your time')]),
    ]);
    expect([text(first), text(retry)]).toEqual(['Slow but sure.', 'Slow but sure.']);
    expect((await server.store.listMessages(id)).filter((m) => m.role === 'user')).toHaveLength(1);
  });

  it('regenerate runs a new turn that streams a fresh answer; the earlier reply stays in the transcript', async () => {
    // The n-th answer: a turn's model call sees the question once per time it was asked.
    const provider = createScriptedProvider((request) =>
      request.messages.at(-1)!.content.startsWith('[')
        ? { text: 'Hi!' }
        : { text: `Answer ${request.messages.filter((m) => m.content === 'tell me a joke').length}.` },
    );
    server = await startTestServer({}, { provider });
    const id = (await server.request('POST', '/api/conversations', { flow: 'assistant' })).body.result.id as string;
    const sent: Array<Record<string, unknown>> = [];
    const transport = new DefaultChatTransport<UIMessage>({
      api: `${server.url}/api/conversations/${id}/chat`,
      fetch: (url, init) => {
        sent.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
        return fetch(url, init);
      },
    });
    const ui = new MemoryChat(id, transport);
    await ui.sendMessage({ text: 'tell me a joke' });
    const question = ui.messages[0]!;
    expect(ui.messages.map(textOf)).toEqual(['tell me a joke', 'Answer 1.']);

    // What the SDK sends (read, not assumed): the list without the reply, ending with the question.
    await ui.regenerate();
    expect(sent[1]).toEqual({ id, trigger: 'regenerate-message', messages: [question] });
    expect(ui.messages.map(textOf)).toEqual(['tell me a joke', 'Answer 2.']);
    // A second click sends the very same request: it is answered again, not replayed.
    await ui.regenerate();
    expect(sent[2]).toEqual(sent[1]);
    expect(ui.messages.map(textOf)).toEqual(['tell me a joke', 'Answer 3.']);
    const replaced = ui.messages[1]!.id;
    await ui.regenerate({ messageId: replaced });
    expect(sent[3]).toEqual({ id, trigger: 'regenerate-message', messageId: replaced, messages: [question] });
    expect(ui.messages.map(textOf)).toEqual(['tell me a joke', 'Answer 4.']);

    // A network retry of the first submit: the reply it was given, and no model call.
    const calls = provider.requests.length;
    const retry = await chat(id, [question]);
    expect(textOf(retry.message!)).toBe('Answer 1.');
    expect(provider.requests).toHaveLength(calls);

    // The transcript as it was said: each regenerate asked the message again and got its own turn.
    const transcript = (await server.store.listMessages(id)).filter((m) => m.role !== 'system' && m.text !== 'Hi!');
    expect(transcript.map((m) => [m.role, m.text])).toEqual(
      [1, 2, 3, 4].flatMap((n) => [
        ['user', 'tell me a joke'],
        ['assistant', `Answer ${n}.`],
      ]),
    );
    const turnIds = new Set(transcript.map((m) => m.turnId));
    expect(turnIds.size).toBe(4);
    const turns = (await server.store.listTurns(id)).filter((turn) => turnIds.has(turn.id));
    const keys = await Promise.all(
      turns.map(async (turn) => (await server!.store.getInbox(turn.inboxId!))?.channelMessageId),
    );
    expect(keys.filter((key) => key?.includes(':regenerate:'))).toHaveLength(3);
  });

  it('refuses a trigger or messageId the AI SDK does not send, naming the field', async () => {
    const id = await start();
    const post = (body: object) =>
      server!.request('POST', `/api/conversations/${id}/chat`, { id, messages: [userMessage('u1', 'hi')], ...body });
    for (const [body, field] of [
      [{ trigger: 'regenerate' }, 'trigger'],
      [{ trigger: 'resume-stream' }, 'trigger'],
      [{ trigger: 7 }, 'trigger'],
      [{ messageId: '' }, 'messageId'],
      [{ messageId: 'a'.repeat(201) }, 'messageId'],
      [{ messageId: 42 }, 'messageId'],
    ] as const)
      expect(await post(body)).toMatchObject({
        status: 400,
        body: { status: 'error', code: 'invalid_request', field },
      });
    expect((await server!.store.listMessages(id)).filter((m) => m.role === 'user')).toHaveLength(0);
  });

  it('rejects a request whose last message is not a user text', async () => {
    const id = await start();
    const response = await server!.request('POST', `/api/conversations/${id}/chat`, {
      messages: [{ id: 'a', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }],
    });
    expect(response).toMatchObject({ status: 400, body: { code: 'invalid_request', field: 'messages' } });
    const long = await server!.request('POST', `/api/conversations/${id}/chat`, {
      messages: [userMessage('u9', 'x'.repeat(32_001))],
    });
    expect(long).toMatchObject({ status: 400, body: { code: 'invalid_request', field: 'messages' } });
    // Ids are part of the message's dedup key: bounded like POST …/message's message_id.
    const longId = await server!.request('POST', `/api/conversations/${id}/chat`, {
      messages: [userMessage('u'.repeat(201), 'hi')],
    });
    expect(longId).toMatchObject({ status: 400, body: { code: 'invalid_request', field: 'messages.0.id' } });
    const longChat = await server!.request('POST', `/api/conversations/${id}/chat`, {
      id: 'c'.repeat(201),
      messages: [userMessage('u1', 'hi')],
    });
    expect(longChat).toMatchObject({ status: 400, body: { code: 'invalid_request', field: 'id' } });
  });
});
