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

const A = '+14165550131';
const B = '+14165550132';
const lastUserText = (request: LlmRequest) => request.messages.at(-1)?.content ?? '';

async function start() {
  server = await startTestServer(
    {},
    { provider: createScriptedProvider((request) => ({ text: `echo: ${lastUserText(request)}` })) },
  );
  const ids: string[] = [];
  for (const phone of [A, B]) {
    const created = await server.request('POST', '/conversation/participants', { phone_number: phone, name: phone });
    expect(created.status).toBe(201);
    await waitFor(() => server!.sink.to(phone).length === 1, { what: `greeting for ${phone}` });
    ids.push(created.body.result.id);
  }
  return { server, ids };
}

const replies = (phone: string) => server!.sink.to(phone).map((message) => message.text);

describe('message ids are per sender', () => {
  it('stores and answers sender B\'s "m1" after sender A used "m1" (HTTP channel)', async () => {
    const { server } = await start();
    const fromA = await server.request('POST', '/conversation/inbound', {
      from: A,
      text: 'hello from A',
      message_id: 'm1',
    });
    const fromB = await server.request('POST', '/conversation/inbound', {
      from: B,
      text: 'hello from B',
      message_id: 'm1',
    });
    expect(fromA).toMatchObject({ status: 202, body: { result: { duplicate: false, status: 'queued' } } });
    expect(fromB).toMatchObject({ status: 202, body: { result: { duplicate: false, status: 'queued' } } });
    expect(fromB.body.result.inbox_id).not.toBe(fromA.body.result.inbox_id);
    expect(await server.store.getInbox(fromB.body.result.inbox_id)).toMatchObject({
      sender: B,
      text: 'hello from B',
      channelMessageId: 'm1',
    });
    await waitFor(() => replies(B).includes('echo: hello from B'), { what: "B's answer" });
    await waitFor(() => replies(A).includes('echo: hello from A'), { what: "A's answer" });
    // Each sender's own redelivery is still a duplicate of their own message.
    const againB = await server.request('POST', '/conversation/inbound', {
      from: B,
      text: 'hello from B',
      message_id: 'm1',
    });
    expect(againB.body.result).toMatchObject({ duplicate: true, inbox_id: fromB.body.result.inbox_id });
  });

  it("dedupes a web session's message ids per conversation", async () => {
    const { server, ids } = await start();
    const [idA, idB] = ids;
    const typedA = await server.request('POST', `/api/conversations/${idA}/message`, {
      text: 'typed by A',
      message_id: 'w1',
    });
    const typedB = await server.request('POST', `/api/conversations/${idB}/message`, {
      text: 'typed by B',
      message_id: 'w1',
    });
    expect(typedA).toMatchObject({ status: 202, body: { duplicate: false } });
    expect(typedB).toMatchObject({ status: 202, body: { duplicate: false } });
    await waitFor(() => replies(B).includes('echo: typed by B'), { what: "B's answer" });
    expect(
      (await server.request('POST', `/api/conversations/${idB}/message`, { text: 'typed by B', message_id: 'w1' }))
        .body,
    ).toMatchObject({ duplicate: true, inboxId: typedB.body.inboxId });
  });
});
