// @requires postgres
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import type { Store } from '../../src/store/store.ts';
import { pgSchemas } from '../kit/pg-schemas.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// A message from a number heard from before is recorded in the statement that checks who the
// number is now (on PostgreSQL one round trip, on SQLite one statement instead of a read and an
// insert), and only if that is still who it was; the outcome is the same on both stores.
const PHONE = '+14165550177';
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const schemas = pgSchemas('known_sender');
afterAll(() => schemas.dropAll());

const lastUserText = (request: LlmRequest) => request.messages.at(-1)?.content ?? '';

/** Records made with a sender read (`record` … `recorded`) and turn context reads (`context`), in order. */
let log: string[] = [];

/** A server whose store counts the sender reads and the records made with one. */
async function start(database: Record<string, string>) {
  const calls = { findSenderByPhone: 0, recordForSender: 0 };
  log = [];
  server = await startTestServer(database, {
    provider: createScriptedProvider((request) => ({ text: `echo: ${lastUserText(request)}` })),
    wrapStore: (store: Store) => ({
      ...store,
      findSenderByPhone: (phone) => ((calls.findSenderByPhone += 1), store.findSenderByPhone(phone)),
      recordForSender: (...args) => {
        calls.recordForSender += 1;
        log.push('record');
        return store.recordForSender(...args).finally(() => log.push('recorded'));
      },
      getTurnContext: (...args) => (log.push('context'), store.getTurnContext(...args)),
    }),
  });
  return calls;
}

async function enrol(): Promise<string> {
  const before = server!.sink.to(PHONE).length;
  const created = await server!.request('POST', '/conversation/participants', { phone_number: PHONE });
  expect(created.status).toBe(201);
  await waitFor(() => server!.sink.to(PHONE).length > before, { what: 'the greeting' });
  return created.body.result.id as string;
}

async function say(text: string, messageId: string) {
  const before = server!.sink.to(PHONE).length;
  const accepted = await server!.request('POST', '/conversation/inbound', {
    from: PHONE,
    text,
    message_id: messageId,
  });
  expect(accepted.status).toBe(202);
  if (!accepted.body.result.duplicate)
    await waitFor(() => server!.sink.to(PHONE).length > before, { what: `the answer to "${text}"` });
  return accepted.body.result as { inbox_id: string; duplicate: boolean; participant_id: string };
}

describe.each([
  ['SQLite', () => ({ DATABASE_URL: tempSqliteUrl() }), false],
  ['PostgreSQL', () => schemas.next(), true],
])('a message from a number heard from before (%s)', (_name, database, readAhead) => {
  it('is recorded for them (a redelivery once), the read of who they are in the same statement', async () => {
    const calls = await start(database());
    const id = await enrol();
    const first = await say('one', 'k1');
    const second = await say('two', 'k2');
    const again = await say('two', 'k2');
    expect([first.participant_id, second.participant_id]).toEqual([id, id]);
    expect(again).toMatchObject({ inbox_id: second.inbox_id, duplicate: true });
    expect(
      server!.sink
        .to(PHONE)
        .map((message) => message.text)
        .slice(1),
    ).toEqual(['echo: one', 'echo: two']);
    // The first message teaches who the number is; the next two are recorded with that read.
    expect(calls).toEqual({ findSenderByPhone: 1, recordForSender: 2 });
  });

  it('starts its turn from one context read, made beside its recording on PostgreSQL', async () => {
    await start(database());
    await enrol();
    await say('one', 'a1');
    log = [];
    await say('two', 'a2');
    await say('three', 'a3');
    // PostgreSQL: the lease kept since the last turn, the read goes out before the record's answer.
    expect(log).toEqual(
      readAhead
        ? ['record', 'context', 'recorded', 'record', 'context', 'recorded']
        : ['record', 'recorded', 'context', 'record', 'recorded', 'context'],
    );
  });

  it('is recorded for whoever the number is now, when it was enrolled again as someone else', async () => {
    const calls = await start(database());
    const before = await enrol();
    await say('to the first enrolment', 'r1');
    expect((await server!.request('DELETE', `/conversation/participants/${before}`)).status).toBe(200);
    const after = await enrol();
    const message = await say('to the second one', 'r2');
    expect(message.participant_id).toBe(after);
    expect(await server!.store.getInbox(message.inbox_id)).toMatchObject({ participantId: after, status: 'processed' });
    const history = await server!.request('GET', `/conversation/participants/${after}/history`);
    expect(history.body.result.messages.map((m: { text: string }) => m.text).slice(-2)).toEqual([
      'to the second one',
      'echo: to the second one',
    ]);
    expect(calls.recordForSender).toBe(1); // tried for the first enrolment, not recorded for it
  });
});

// A turn's context read ahead (PostgreSQL, decision 020) must not hide what work queued on the
// conversation before the turn wrote: a timer or a platform route runs through `Engine.exclusive`.
it('a turn sees what exclusive work queued between its read ahead and its start wrote (PostgreSQL)', async () => {
  const requests: LlmRequest[] = [];
  let inject = false;
  server = await startTestServer(schemas.next(), {
    provider: createScriptedProvider((request) => (requests.push(request), { text: 'ok' })),
    wrapStore: (store: Store) => ({
      ...store,
      recordForSender: (...args) => {
        const recording = store.recordForSender(...args);
        const conversationId = args[1].conversationId!;
        // After the read ahead went out, before the record's answer (as a timer firing then would).
        if (inject)
          queueMicrotask(() => {
            inject = false;
            const note = { id: 'msg_injected', conversationId, role: 'user', kind: 'text', text: 'INJECTED' } as const;
            const message = {
              ...note,
              poll: null,
              source: 'participant',
              turnId: null,
              createdAt: new Date(),
            } as const;
            void server!.engine.exclusive(conversationId, () => store.appendMessages([message]));
          });
        return recording;
      },
    }),
  });
  await enrol();
  await say('one', 'x1');
  await say('two', 'x2');
  await server.engine.idle(); // no turn runs: the next message's context is read ahead
  inject = true;
  const before = requests.length;
  await say('three', 'x3');
  expect(inject).toBe(false); // the job was queued
  const seen = requests.slice(before).map((request) => request.messages.map((m) => m.content));
  expect(seen.at(-1)).toContain('INJECTED');
  expect(seen.at(-1)?.at(-1)).toBe('three');
});
