// @requires postgres
import { afterAll, afterEach, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import type { Store } from '../../src/store/store.ts';
import { pgSchemas } from '../kit/pg-schemas.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// A turn's context read ahead (PostgreSQL, decision 020) must not hide what work queued on the
// conversation before the turn wrote: a timer or a platform route runs through `Engine.exclusive`.
const PHONE = '+14165550178';
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const schemas = pgSchemas('read_ahead');
afterAll(() => schemas.dropAll());

async function say(text: string, messageId: string) {
  const before = server!.sink.to(PHONE).length;
  const accepted = await server!.request('POST', '/conversation/inbound', { from: PHONE, text, message_id: messageId });
  expect(accepted.status).toBe(202);
  await waitFor(() => server!.sink.to(PHONE).length > before, { what: `the answer to "${text}"` });
  await server!.engine.idle();
}

it('a turn sees what exclusive work queued between its read ahead and its start wrote', async () => {
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
            void server!.engine.exclusive(conversationId, () =>
              store.appendMessages([
                {
                  id: 'msg_injected',
                  conversationId,
                  role: 'user',
                  kind: 'text',
                  text: 'INJECTED',
                  poll: null,
                  source: 'participant',
                  turnId: null,
                  createdAt: new Date(),
                },
              ]),
            );
          });
        return recording;
      },
    }),
  });
  const created = await server.request('POST', '/conversation/participants', { phone_number: PHONE });
  expect(created.status).toBe(201);
  await waitFor(() => server!.sink.to(PHONE).length > 0, { what: 'the greeting' });
  await server.engine.idle();
  await say('one', 'x1');
  await say('two', 'x2');
  inject = true;
  const before = requests.length;
  await say('three', 'x3');
  expect(inject).toBe(false); // the job was queued
  const seen = requests.slice(before).map((request) => request.messages.map((m) => m.content));
  expect(seen.at(-1)).toContain('INJECTED');
  expect(seen.at(-1)?.at(-1)).toBe('three');
});
