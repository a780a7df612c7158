import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedProvider, type ScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { sayAndWait, startTestServer, type TestServer } from '../kit/test-server.ts';

// BEHAVIOR-NOTES "Conversation history": the model reads the last 30 messages by default;
// CHAT_HISTORY_LIMIT -1 = all of the last 50, 0 = none, N = min(N, 50); the current message comes
// after the window, never twice; notes nobody said (debug, operator) never take a place in it.
const PHONE = '+14165550166';
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function conversation(turns: number, env: Record<string, string> = {}): Promise<ScriptedProvider> {
  const provider = createScriptedProvider((request) => ({ text: `re: ${request.messages.at(-1)?.content}` }));
  server = await startTestServer({ PROMPTPIPE_DEBUG: 'true', ...env }, { provider });
  await server.request('POST', '/conversation/participants', { phone_number: PHONE });
  for (let turn = 1; turn <= turns; turn++) await sayAndWait(server, PHONE, `message ${turn}`);
  return provider;
}

/** The transcript part of the last model call: what comes after the leading system messages. */
function transcriptOf(provider: ScriptedProvider) {
  const messages = provider.requests.at(-1)!.messages;
  return messages.slice(messages.findIndex((message) => message.role !== 'system'));
}

describe('the history window the model reads', () => {
  it(
    'is the last 30 participant and assistant messages by default, debug notes left out, then the current ' +
      'message once',
    async () => {
      const provider = await conversation(26);
      const transcript = transcriptOf(provider);
      expect(transcript).toHaveLength(31);
      expect(transcript.every((message) => message.role === 'user' || message.role === 'assistant')).toBe(true);
      expect(transcript.slice(-3).map((message) => message.content)).toEqual([
        'message 25',
        're: message 25',
        'message 26',
      ]);
      expect(transcript.filter((message) => message.content === 'message 26')).toHaveLength(1);
    },
  );

  it('holds what was appended between two turns by another writer (another process), not only the turns', async () => {
    const provider = await conversation(2);
    const id = (await server!.request('GET', '/conversation/participants')).body.result[0].id as string;
    const conversationId = (await server!.store.findConversationByParticipant(id))!.id;
    const [last] = (await server!.store.listMessages(conversationId)).slice(-1);
    await server!.store.appendMessages([
      { ...last!, id: 'msg_elsewhere', role: 'assistant', source: 'model', text: 'said by another process' },
    ]);
    await sayAndWait(server!, PHONE, 'message 3');
    expect(
      transcriptOf(provider)
        .map((message) => message.content)
        .slice(1),
    ).toEqual(['message 1', 're: message 1', 'message 2', 're: message 2', 'said by another process', 'message 3']);
  });

  it('is read from the store only when the transcript changed since the turn this process last ran', async () => {
    const reads: Array<{ knownThrough: number | undefined; read: boolean }> = [];
    const provider = createScriptedProvider((request) => ({ text: `re: ${request.messages.at(-1)?.content}` }));
    server = await startTestServer(
      {},
      {
        provider,
        wrapStore: (store) => ({
          ...store,
          getTurnContext: async (...args: Parameters<typeof store.getTurnContext>) => {
            const context = await store.getTurnContext(...args);
            reads.push({ knownThrough: args[3], read: context?.history !== null });
            return context;
          },
        }),
      },
    );
    await server.request('POST', '/conversation/participants', { phone_number: PHONE });
    await server.engine.idle();
    for (let turn = 1; turn <= 3; turn++) await sayAndWait(server, PHONE, `message ${turn}`);
    // The greeting's turn reads it; every later turn knew it from the turn before.
    expect(reads.map(({ read }) => read)).toEqual([true, false, false, false]);
    expect(
      transcriptOf(provider)
        .map((message) => message.content)
        .slice(1),
    ).toEqual(['message 1', 're: message 1', 'message 2', 're: message 2', 'message 3']);
  });

  it('follows CHAT_HISTORY_LIMIT: -1 is the last 50, 0 none, 5 the last five', async () => {
    expect(transcriptOf(await conversation(27, { CHAT_HISTORY_LIMIT: '-1' }))).toHaveLength(51);
    await server!.close();
    expect(transcriptOf(await conversation(3, { CHAT_HISTORY_LIMIT: '0' })).map((message) => message.content)).toEqual([
      'message 3',
    ]);
    await server!.close();
    expect(transcriptOf(await conversation(4, { CHAT_HISTORY_LIMIT: '5' }))).toHaveLength(6);
  });
});
