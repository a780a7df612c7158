import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  lastUserText,
  startFakeOpenAiServer,
  type ChatRequestBody,
  type FakeOpenAiServer,
  type FakeReply,
} from '../kit/fake-openai-server.ts';
import { sayAndWait, startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// Issue item 9: one model response asking for 50 tool calls ran all 50. Over a real socket to the
// fake OpenAI-compatible server, through the habit coach's tool loop.
const PHONE = '+14165550377';
const RESPONSE_LIMIT = /too many tool calls in one response; at most (\d+) are run/;
const TURN_LIMIT = /too many tool calls in this turn; at most (\d+) are run/;

let model: FakeOpenAiServer;
let server: TestServer | undefined;

/** 50 distinct, valid `save_user_profile` calls in one response (ids unique per response). */
const fiftyCalls = (round: number): FakeReply => ({
  toolCalls: Array.from({ length: 50 }, (_, index) => ({
    id: `call_${round}_${index}`,
    name: 'save_user_profile',
    arguments: { habit_domain: `domain ${round}.${index}` },
  })),
});

/** Tool-call rounds the model already made for the current user message. */
const roundsSoFar = (body: ChatRequestBody) => {
  const messages = body.messages as Array<{ role: string; tool_calls?: unknown[] }>;
  const lastUser = messages.findLastIndex((message) => message.role === 'user');
  return messages.slice(lastUser).filter((message) => message.role === 'assistant' && message.tool_calls).length;
};

beforeAll(async () => {
  // "go" and "go twice": 50 tool calls per response, for one or two responses; then a text reply.
  model = await startFakeOpenAiServer((body) => {
    const said = lastUserText(body);
    const rounds = roundsSoFar(body);
    if (said === 'go' && rounds === 0) return fiftyCalls(1);
    if (said === 'go twice' && rounds < 2) return fiftyCalls(rounds + 1);
    return { text: rounds > 0 ? 'Done.' : 'Welcome!' };
  });
});
afterAll(() => model.close());
afterEach(async () => {
  await server?.close();
  server = undefined;
  model.requests.length = 0;
});

async function start(env: Record<string, string> = {}) {
  server = await startTestServer({ LLM_BASE_URL: model.baseUrl, LLM_MAX_RETRIES: '0', ...env });
  const created = await server.request('POST', '/conversation/participants', { phone_number: PHONE });
  expect(created.status).toBe(201);
  await waitFor(() => server!.sink.to(PHONE).length === 1, { what: 'greeting' });
  return created.body.result.id as string;
}

type AuditedCall = { name: string; round: number; status: string; result: string; arguments: string };
async function lastTurnCalls(id: string): Promise<AuditedCall[]> {
  const turns = (await server!.request('GET', `/conversation/participants/${id}/turns?limit=1`)).body.result as Array<{
    tool_calls: AuditedCall[];
  }>;
  return turns[0]!.tool_calls;
}

/** The tool results the model was sent in the request after its round `round` (1-based). */
function resultsSentAfter(round: number): Array<{ tool_call_id: string; content: string }> {
  const request = model.requests.find(
    (recorded) => lastUserText(recorded.body).startsWith('go') && roundsSoFar(recorded.body) === round,
  )!;
  const messages = request.body.messages as Array<{
    role: string;
    tool_call_id?: string;
    content: string;
    tool_calls?: Array<{ id: string }>;
  }>;
  const asked = messages.filter((message) => message.role === 'assistant' && message.tool_calls).at(-1)!;
  const answers = messages.slice(messages.indexOf(asked) + 1).filter((message) => message.role === 'tool');
  // The conversation stays valid for the provider: every id asked gets exactly one result.
  expect(answers.map((answer) => answer.tool_call_id)).toEqual(asked.tool_calls!.map((call) => call.id));
  return answers as Array<{ tool_call_id: string; content: string }>;
}

describe('tool calls per model response and per turn', () => {
  it(
    'runs the first 8 of 50 calls in one response (the default) and answers the other 42 with an error ' + 'result',
    async () => {
      const id = await start();
      expect(await sayAndWait(server!, PHONE, 'go')).toEqual(['Done.']);

      const audited = await lastTurnCalls(id);
      expect(audited).toHaveLength(50);
      const ran = audited.filter((call) => !RESPONSE_LIMIT.test(call.result));
      expect(ran.map((call) => JSON.parse(call.arguments).habit_domain)).toEqual(
        Array.from({ length: 8 }, (_, index) => `domain 1.${index}`),
      );
      expect(ran.every((call) => call.status === 'ok')).toBe(true);
      const refused = audited.filter((call) => RESPONSE_LIMIT.test(call.result));
      expect(refused).toHaveLength(42);
      expect(refused.every((call) => call.status === 'error' && RESPONSE_LIMIT.exec(call.result)![1] === '8')).toBe(
        true,
      );

      const sent = resultsSentAfter(1);
      expect(sent.slice(0, 8).every((result) => !RESPONSE_LIMIT.test(result.content))).toBe(true);
      expect(sent.slice(8).map((result) => RESPONSE_LIMIT.exec(result.content)?.[1])).toEqual(Array(42).fill('8'));
      // The profile saw only what ran: the last admitted call's domain, not the 50th.
      const state = (await server!.request('GET', `/conversation/participants/${id}/state`)).body.result;
      expect(state.profile.habit_domain).toBe('domain 1.7');
    },
  );

  it(
    'caps a turn across responses, as configured (LLM_MAX_TOOL_CALLS_PER_RESPONSE=5, ' +
      'LLM_MAX_TOOL_CALLS_PER_TURN=7)',
    async () => {
      const id = await start({ LLM_MAX_TOOL_CALLS_PER_RESPONSE: '5', LLM_MAX_TOOL_CALLS_PER_TURN: '7' });
      expect(await sayAndWait(server!, PHONE, 'go twice')).toEqual(['Done.']);

      const audited = await lastTurnCalls(id);
      expect(audited).toHaveLength(100);
      const ranIn = (round: number) =>
        audited.filter(
          (call) => call.round === round && !RESPONSE_LIMIT.test(call.result) && !TURN_LIMIT.test(call.result),
        );
      expect(ranIn(1)).toHaveLength(5);
      expect(ranIn(2).map((call) => JSON.parse(call.arguments).habit_domain)).toEqual(['domain 2.0', 'domain 2.1']);

      const second = resultsSentAfter(2);
      expect(second.slice(2, 5).every((result) => TURN_LIMIT.exec(result.content)?.[1] === '7')).toBe(true);
      expect(second.slice(5).every((result) => RESPONSE_LIMIT.exec(result.content)?.[1] === '5')).toBe(true);
    },
  );
});
