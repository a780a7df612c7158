import { afterAll, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { openWebSession } from '../kit/web-session.ts';

// A real model passes the phone as the caller typed or said it; verification must not care.
const lastUser = (request: LlmRequest) => [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
const role = (request: LlmRequest) => /^\[service-desk:(\w+)\]/.exec(request.messages[0]?.content ?? '')?.[1];

let server: TestServer | undefined;
afterAll(() => server?.close());

describe('service desk verification with DEFAULT_PHONE_REGION=US', () => {
  it('verifies the caller whichever way they gave their number', async () => {
    const provider = createScriptedProvider((request) => {
      if (role(request) === 'acknowledge') return { text: 'One moment.' };
      if (role(request) === 'decide')
        return { toolCalls: [{ name: 'verify_account', arguments: { phone: lastUser(request), zip: '94107' } }] };
      return { text: request.messages[0]!.content.includes('verified') ? 'You are verified.' : 'Not verified.' };
    });
    server = await startTestServer(
      { CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z', DEFAULT_PHONE_REGION: 'US' },
      { provider },
    );
    for (const said of [
      '415-555-0100',
      '(415) 555-0100',
      '4155550100',
      'four one five five five five oh one double oh',
    ]) {
      const { id, say, client } = await openWebSession(server, 'service-desk');
      await say(said);
      // What the caller sees while tools run names no tool and no state.
      const shown = client.of('status').map((event) => (event as { text: string }).text);
      expect(shown.length).toBeGreaterThan(0);
      for (const text of shown) expect(text, text).not.toMatch(/verify_account|_[a-z]+|Verif[a-z]*Idle|Collecting/);
      const verification = (await server.store.listToolCalls(id)).find((call) => call.name === 'verify_account');
      expect(JSON.parse(verification!.result), said).toMatchObject({ verified: true, customerId: 'cus_alex' });
    }
  });
});
