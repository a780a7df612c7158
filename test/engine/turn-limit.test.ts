import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const PHONE = '+14165550177';
const lastUserText = (request: LlmRequest) => request.messages.at(-1)?.content ?? '';

/**
 * A model that holds its first answer to a message until `release()`, so a burst is recorded while
 * the first turn runs; it records what each turn gave it as the person's words.
 */
function heldEchoModel() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const asked: string[] = [];
  const provider = createScriptedProvider(async (request) => {
    const said = lastUserText(request);
    if (said.startsWith('[')) return { text: 'welcome' };
    asked.push(said);
    if (asked.length === 1) await gate;
    return { text: `echo ${asked.length}` };
  });
  return { provider, asked, release };
}

async function burst(count: number, options: { paused?: boolean } = {}): Promise<string[]> {
  const created = await server!.request('POST', '/conversation/participants', { phone_number: PHONE, name: 'Burst' });
  expect(created.status).toBe(201);
  await waitFor(() => server!.sink.to(PHONE).length >= 1, { what: 'the greeting' });
  if (options.paused)
    expect(
      (await server!.request('PUT', `/conversation/participants/${created.body.result.id}`, { status: 'paused' }))
        .status,
    ).toBe(200);
  const inboxIds: string[] = [];
  // One after the other, so the arrival order is the order sent.
  for (let index = 0; index < count; index++) {
    const response = await server!.request('POST', '/conversation/inbound', { from: PHONE, text: `m${index}` });
    expect(response.status).toBe(202);
    inboxIds.push(response.body.result.inbox_id);
  }
  return inboxIds;
}

async function settled(inboxIds: string[]) {
  await waitFor(
    async () =>
      (await Promise.all(inboxIds.map((id) => server!.store.getInbox(id)))).every((item) => item?.status !== 'pending'),
    {
      what: 'every message answered',
      timeoutMs: 20_000,
    },
  );
  await server!.engine.idle();
}

describe('the per-sender turn limit', () => {
  it('answers a burst past the limit together: every message kept in order, far fewer turns and replies', async () => {
    const model = heldEchoModel();
    server = await startTestServer(
      { RATE_LIMITS: 'on', TURN_RATE_LIMIT: '1', TURN_RATE_WINDOW: '2s' },
      { provider: model.provider },
    );
    const inboxIds = await burst(10);
    model.release();
    await settled(inboxIds);

    // Every message reached the model exactly once, in order; most of them in one turn.
    expect(model.asked.flatMap((said) => said.split('\n\n'))).toEqual(inboxIds.map((_, index) => `m${index}`));
    expect(model.asked.length).toBeGreaterThanOrEqual(2);
    expect(model.asked.length).toBeLessThanOrEqual(3);
    expect(Math.max(...model.asked.map((said) => said.split('\n\n').length))).toBeGreaterThanOrEqual(8);

    // Nothing lost: each message is its own transcript entry and its inbox item is processed.
    const items = await Promise.all(inboxIds.map((id) => server!.store.getInbox(id)));
    expect(items.map((item) => item?.status)).toEqual(inboxIds.map(() => 'processed'));
    const conversation = await server.store.findConversationByParticipant(items[0]!.participantId!);
    const messages = await server.store.listMessages(conversation!.id, { limit: 100 });
    expect(messages.filter((message) => message.role === 'user').map((message) => message.text)).toEqual(
      inboxIds.map((_, index) => `m${index}`),
    );
    // One reply per turn (and the greeting), not one per message.
    await waitFor(() => server!.sink.to(PHONE).length === 1 + model.asked.length, { what: 'the replies' });
    expect(server.sink.to(PHONE).map((message) => message.text)).toEqual([
      'welcome',
      ...model.asked.map((_, index) => `echo ${index + 1}`),
    ]);
  });

  it("keeps a paused participant's burst the same way: every message in the transcript, none answered", async () => {
    const model = heldEchoModel();
    server = await startTestServer(
      { RATE_LIMITS: 'on', TURN_RATE_LIMIT: '1', TURN_RATE_WINDOW: '1s' },
      { provider: model.provider },
    );
    const inboxIds = await burst(5, { paused: true });
    await settled(inboxIds);
    const items = await Promise.all(inboxIds.map((id) => server!.store.getInbox(id)));
    expect(items.map((item) => item?.status)).toEqual(inboxIds.map(() => 'ignored'));
    const conversation = await server.store.findConversationByParticipant(items[0]!.participantId!);
    const messages = await server.store.listMessages(conversation!.id, { limit: 100 });
    expect(messages.filter((message) => message.role === 'user').map((message) => message.text)).toEqual([
      'm0',
      'm1',
      'm2',
      'm3',
      'm4',
    ]);
    expect(model.asked).toEqual([]);
  });

  it('is off with RATE_LIMITS=off: a turn per message', async () => {
    const model = heldEchoModel();
    server = await startTestServer(
      { RATE_LIMITS: 'off', TURN_RATE_LIMIT: '1', TURN_RATE_WINDOW: '2s' },
      { provider: model.provider },
    );
    const inboxIds = await burst(4);
    model.release();
    await settled(inboxIds);
    expect(model.asked).toEqual(['m0', 'm1', 'm2', 'm3']);
  });
});

describe('the turn limit and the virtual clock', () => {
  it('lets the clock move while a conversation waits for the limit (wall time): the wait is not settled', async () => {
    const model = heldEchoModel();
    model.release();
    server = await startTestServer(
      { CLOCK: 'virtual', RATE_LIMITS: 'on', TURN_RATE_LIMIT: '1', TURN_RATE_WINDOW: '10m' },
      { provider: model.provider },
    );
    const inboxIds = await burst(2);
    await waitFor(() => model.asked.length === 1, { what: 'the first turn' });
    // The second message waits ten minutes of wall time for its turn; a move of the clock waited with it.
    const moved = await server.request('POST', '/admin/clock', { advance: '5m' });
    expect(moved.status).toBe(200);
    expect((await server.store.getInbox(inboxIds[1]!))?.status).toBe('pending');
    expect(model.asked).toEqual(['m0']);
  });
});
