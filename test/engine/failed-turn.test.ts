import { afterEach, describe, expect, it } from 'vitest';
import { randomIds, type IdGenerator } from '../../src/core/clock.ts';
import { MODEL_FAILURE_REPLY } from '../../src/engine/turn-runner.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// 002 §9 scenario 10, in our transactional form: when a turn cannot be committed (here the audit
// of its tool call fails every time), the message is still kept and the person still hears back.
const PHONE = '+14165550167';
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a turn that cannot be committed', () => {
  it('keeps the message in the history, answers with the apology, and marks the message failed', async () => {
    const ids: IdGenerator = {
      next: (prefix) => {
        if (prefix === 'tool') throw new Error('injected: the audit cannot be written');
        return randomIds.next(prefix);
      },
    };
    const provider = createScriptedProvider((request) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return { text: 'Saved!' };
      if (last.content.startsWith('[')) return { text: 'Welcome!' }; // the greeting
      return { toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'walking' } }] };
    });
    server = await startTestServer({}, { provider, ids });
    const id = (await server.request('POST', '/conversation/participants', { phone_number: PHONE })).body.result.id;
    await waitFor(() => server!.sink.to(PHONE).length === 1, { what: 'greeting' });

    const accepted = await server.request('POST', '/conversation/inbound', {
      from: PHONE,
      text: 'I want to walk more',
      message_id: 'f1',
    });
    await waitFor(() => server!.sink.to(PHONE).length === 2, { what: 'the apology' });
    expect(server.sink.to(PHONE)[1]!.text).toBe(MODEL_FAILURE_REPLY);
    const history = (await server.request('GET', `/conversation/participants/${id}/history`)).body.result.messages;
    expect(history.slice(-2).map((m: any) => [m.role, m.text])).toEqual([
      ['user', 'I want to walk more'],
      ['assistant', MODEL_FAILURE_REPLY],
    ]);
    expect(await server.store.getInbox(accepted.body.result.inbox_id)).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('injected'),
    });
    const state = (await server.request('GET', `/conversation/participants/${id}/state`)).body.result;
    expect(state.profile?.habit_domain ?? null).toBeNull(); // the failed turn's effects are not kept
    // The operator sees it: a failed turn after its three runs, with what went wrong.
    const turns = (await server.request('GET', `/conversation/participants/${id}/turns`)).body.result;
    expect(turns.at(-1)).toMatchObject({
      trigger: 'message',
      status: 'failed',
      attempts: 3,
      error: expect.stringContaining('injected'),
    });
  });
});
