import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider, type ScriptedStep } from '../../src/llm/scripted-provider.ts';
import { EventClient } from '../kit/event-client.ts';
import { FakeEmbeddings } from '../kit/fake-embeddings.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// The assistant's memory belongs to the person (issue #22, decision 006): notes and recall span
// every conversation of theirs (a participant, or web sessions started for them), and recall
// finds by meaning when an embeddings model is configured (a fake endpoint on loopback here).
let server: TestServer | undefined;
let embeddings: FakeEmbeddings | undefined;
afterEach(async () => {
  await server?.close();
  await embeddings?.close();
  server = embeddings = undefined;
});

const marker = (request: LlmRequest) => /^\[assistant:(\w+)\]/.exec(request.messages[0]?.content ?? '')?.[1];
const lastUser = (request: LlmRequest) => [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
/** Recall extraction: the few words a model would pick. */
const KEYWORDS: Record<string, string[]> = {
  'where did I leave my car?': ['car', 'leave'],
  'what about the garage?': ['garage'],
};

/** A model that keeps notes when told "note: …", lists them when asked, and otherwise says ok. */
function reply(request: LlmRequest): ScriptedStep {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return { text: `Here you go: ${last.content}` };
  const said = lastUser(request);
  if (said.startsWith('note: '))
    return { toolCalls: [{ name: 'add_note', arguments: { text: said.slice('note: '.length) } }] };
  if (said === 'my notes?') return { toolCalls: [{ name: 'list_notes', arguments: {} }] };
  return { text: 'ok' };
}

async function start(env: Record<string, string> = {}) {
  const provider = createScriptedProvider((request) => {
    const role = marker(request);
    if (role === 'route') return { text: 'life' };
    if (role === 'recall') return { text: JSON.stringify({ keywords: KEYWORDS[lastUser(request)] ?? [] }) };
    if (role === 'reply') return lastUser(request).startsWith('[The user') ? { text: 'Hello!' } : reply(request);
    return { text: 'ok' }; // the habit coach, for a participant enrolled there
  });
  server = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: '2026-11-23T10:00:00Z', DEFAULT_PHONE_REGION: 'US', ...env },
    { provider },
  );
  return provider;
}

/** A web session of the assistant for `caller` (or nobody). */
async function open(caller?: Record<string, string>) {
  const started = await server!.request('POST', '/api/conversations', {
    flow: 'assistant',
    ...(caller ? { caller } : {}),
  });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const id = started.body.result.id as string;
  const client = await EventClient.connect(server!.url, id, '?lastEventId=0');
  await waitFor(() => client.of('final').length === 1, { what: 'greeting' });
  const say = async (text: string) => {
    const before = client.of('final').length;
    expect((await server!.request('POST', `/api/conversations/${id}/message`, { text })).status).toBe(202);
    await waitFor(() => client.of('final').length > before, { what: `reply to ${text}` });
    return String((client.of('final').at(-1) as { text: string }).text);
  };
  const audit = async (name: string) =>
    (await server!.store.listToolCalls(id)).filter((call) => call.name === name).map((call) => call.result);
  return { id, say, audit };
}

/** What the reply call of the latest turn was told was recalled. */
const recalledIn = (provider: ReturnType<typeof createScriptedProvider>) => {
  const system = provider.requests.filter((request) => marker(request) === 'reply').at(-1)!.messages[0]!.content;
  return /Relevant conversation history:\n([\s\S]*?)(\n\n|$)/.exec(system)?.[1] ?? '';
};

describe('assistant memory per person', () => {
  it('keeps notes for the person across web sessions (and a participant across channels), nobody else', async () => {
    await start();
    const first = await open({ id: 'user-42' });
    await first.say('note: buy oat milk');
    expect(await (await open({ id: 'user-42' })).say('my notes?')).toMatch(/buy oat milk/);
    expect(await (await open({ id: 'user-7' })).say('my notes?')).toBe('Here you go: No notes yet.');
    expect(await (await open()).say('my notes?')).toBe('Here you go: No notes yet.');

    // A participant and a web session started with their phone (any format) share their notes.
    const enrolled = await server!.request('POST', '/conversation/participants', {
      phone_number: '+14165550123',
      flow: 'assistant',
    });
    const participantId = enrolled.body.result.id as string;
    await (await open({ phone: '(416) 555-0123' })).say('note: dentist on Friday');
    const notes = await server!.store.listNotes({ conversationId: 'any', person: participantId });
    expect(notes.map((note) => note.text)).toEqual(['dentist on Friday']);
    expect(await (await open({ phone: '+1 416 555 0123' })).say('my notes?')).toMatch(/dentist on Friday/);
  });

  it("recalls by meaning what text search misses, across the person's sessions, and keeps the vectors", async () => {
    embeddings = await new FakeEmbeddings().start('/v1');
    const provider = await start({ LLM_BASE_URL: embeddings.baseUrl, LLM_EMBEDDING_MODEL: 'fake-embed' });
    const earlier = await open({ id: 'user-42' });
    await earlier.say('I parked the vehicle on level 3 of the garage');
    await earlier.say('Remind me to buy oat milk');
    await (await open({ id: 'user-7' })).say('My car is in the street');

    const later = await open({ id: 'user-42' });
    await later.say('where did I leave my car?');
    // No message holds "car" or "leave": only the meaning finds it; nobody else's car is recalled.
    expect(recalledIn(provider)).toMatch(/User: I parked the vehicle on level 3 of the garage$/);
    expect(await later.audit('recall_memory')).toEqual(['1 message(s) recalled: 0 by text, 1 by meaning']);
    expect(embeddings.sent.every((request) => request.model === 'fake-embed')).toBe(true);
    expect(embeddings.texts).not.toContain('My car is in the street');
    const kept = await server!.store.listEmbeddings({ conversationId: later.id, person: 'id:user-42' }, 'fake-embed', {
      limit: 50,
    });
    expect(kept.map((entry) => entry.message.text)).toContain('I parked the vehicle on level 3 of the garage');

    // Embedded once: the next recall sends only its query and what is new since.
    const before = embeddings.texts.length;
    await later.say('where did I leave my car?');
    // The query, then the two messages of the last turn (newest first).
    expect(embeddings.texts.slice(before)).toEqual(['where did I leave my car?', 'ok', 'where did I leave my car?']);
    expect(recalledIn(provider)).toContain('I parked the vehicle');
  });

  it('falls back to text search when the embeddings endpoint fails or does not answer in time', async () => {
    embeddings = await new FakeEmbeddings().start('/v1');
    const provider = await start({
      LLM_BASE_URL: embeddings.baseUrl,
      LLM_EMBEDDING_MODEL: 'fake-embed',
      ASSISTANT_HELPER_TIMEOUT_MS: '300',
    });
    await (await open({ id: 'user-42' })).say('I parked the vehicle on level 3 of the garage');
    const later = await open({ id: 'user-42' });
    embeddings.mode = 'error';
    await later.say('where did I leave my car?');
    expect(recalledIn(provider)).toBe('');
    await later.say('what about the garage?');
    expect(recalledIn(provider)).toContain('I parked the vehicle on level 3 of the garage');
    embeddings.mode = 'hang';
    await later.say('what about the garage?');
    expect(recalledIn(provider)).toContain('I parked the vehicle on level 3 of the garage');
    expect(await later.audit('recall_memory')).toEqual([
      '0 message(s) recalled: 0 by text (semantic recall unavailable: the embeddings endpoint answered 500)',
      '1 message(s) recalled: 1 by text (semantic recall unavailable: the embeddings endpoint answered 500)',
      // The garage message, and the question about it asked the turn before.
      '2 message(s) recalled: 2 by text (semantic recall unavailable: timed out)',
    ]);
  });

  it('never recalls, nor sends for embedding, a conversation whose flow does not search its transcript', async () => {
    embeddings = await new FakeEmbeddings().start('/v1');
    const provider = await start({ LLM_BASE_URL: embeddings.baseUrl, LLM_EMBEDDING_MODEL: 'fake-embed' });
    // The person's habit coaching (transcript_search off) mentions their car and garage.
    await server!.request('POST', '/conversation/participants', { phone_number: '+14165550123' });
    await server!.request('POST', '/conversation/inbound', {
      from: '+14165550123',
      text: 'I walked instead of taking the car to the garage',
    });
    await server!.engine.idle();
    const session = await open({ phone: '4165550123' });
    await session.say('what about the garage?');
    expect(recalledIn(provider)).toBe('');
    expect(await session.audit('recall_memory')).toEqual(['0 message(s) recalled: 0 by text, 0 by meaning']);
    // The session's own messages are the person's memory; the habit conversation never is.
    await session.say('where did I leave my car?');
    expect(recalledIn(provider)).toMatch(/^- \[[^\]]+\] User: what about the garage\?$/);
    expect(embeddings.texts.join('\n')).not.toMatch(/walked instead/);
    // It is there, the person's: left out because its flow does not search its transcript.
    const participant = await server!.store.findParticipantByPhone('+14165550123');
    const habit = await server!.store.findConversationByParticipant(participant!.id);
    expect((await server!.store.listMessages(habit!.id)).map((m) => m.text)).toContain(
      'I walked instead of taking the car to the garage',
    );
  });
});
