import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider, type ScriptedStep } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { openWebSession } from '../kit/web-session.ts';

export type Role = 'route' | 'recall' | 'reply';
export const roleOf = (request: LlmRequest): Role =>
  /^\[assistant:(\w+)\]/.exec(request.messages[0]?.content ?? '')![1] as Role;
export const lastUser = (request: LlmRequest) =>
  [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
const isGreeting = (request: LlmRequest) => lastUser(request).startsWith('[The user has just opened');

export interface AssistantScript {
  route?: (said: string) => ScriptedStep;
  recall?: (said: string) => ScriptedStep;
  /** The agentic loop's calls, numbered from 0 across the whole test (the greeting excluded). */
  reply: (request: LlmRequest, index: number) => ScriptedStep;
}

/** A web session of the assistant flow against a scripted model that records every request. */
export async function startAssistant(script: AssistantScript, env: Record<string, string> = {}) {
  let replies = 0;
  const provider = createScriptedProvider((request) => {
    const role = roleOf(request);
    if (role === 'route') return script.route?.(lastUser(request)) ?? { text: 'life' };
    if (role === 'recall') return script.recall?.(lastUser(request)) ?? { text: '{"keywords": []}' };
    if (isGreeting(request)) return { text: 'Hello!' };
    return script.reply(request, replies++);
  });
  const server: TestServer = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: '2026-11-23T10:00:00Z', ...env },
    { provider },
  );
  const session = await openWebSession(server, 'assistant');
  const { id, client } = session;
  const say = async (text: string): Promise<string> => (await session.say(text)).text;
  const advance = (by: string) => server.request('POST', '/admin/clock', { advance: by });
  const requests = (role: Role) =>
    provider.requests.filter((request) => roleOf(request) === role && !isGreeting(request));
  const lastTurn = async () => (await server.store.listTurns(id)).at(-1)!;
  const auditOf = async (turnId: string) => server.store.listToolCalls(id, { turnIds: [turnId] });
  return { server, id, client, say, advance, requests, lastTurn, auditOf, provider };
}
