import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider, type ScriptedStep } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { openWebSession } from '../kit/web-session.ts';
import { crmOf } from '../kit/crm.ts';

// The service desk against a scripted model that plays each role (acknowledge, decide, narrate)
// as the test says, including badly: proposals the gate must refuse, narration in JSON.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Role = 'acknowledge' | 'decide' | 'narrate';
const roleOf = (request: LlmRequest): Role =>
  /^\[service-desk:(\w+)\]/.exec(request.messages[0]?.content ?? '')![1] as Role;
const lastUser = (request: LlmRequest) => [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';

async function session(
  decide: (said: string, request: LlmRequest) => ScriptedStep,
  narrate: (request: LlmRequest) => ScriptedStep = (request) => ({
    text: `Narrated: ${request.messages[0]!.content.split('\n')
      .filter((l) => l.startsWith('Fact:'))
      .join(' ')}`,
  }),
) {
  const provider = createScriptedProvider((request) => {
    const role = roleOf(request);
    if (role === 'acknowledge') return { text: 'On it.' };
    if (role === 'decide') return decide(lastUser(request), request);
    return narrate(request);
  });
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z' }, { provider });
  return { ...(await openWebSession(server, 'service-desk')), provider };
}

const verify = { toolCalls: [{ name: 'verify_account', arguments: { phone: '+14155550100', zip: '94107' } }] };

describe('service desk against a misbehaving model', () => {
  it("a proposal to cancel another customer's appointment is refused and nothing changes", async () => {
    const { say, id } = await session((said) =>
      said === 'verify me'
        ? verify
        : { toolCalls: [{ name: 'cancel_appointment', arguments: { appointmentId: 'apt_jordan_1' } }] },
    );
    await say('verify me');
    await say('cancel apt_jordan_1');
    expect((await crmOf(server!.store).upcomingAppointments('cus_jordan', '2026-06-01', 5)).map((a) => a.id)).toEqual([
      'apt_jordan_1',
    ]);
    expect(await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 5)).toHaveLength(2);
    const gateEntries = (await server!.store.listToolCalls(id))
      .filter((call) => call.name === 'gate')
      .map((call) => JSON.parse(call.arguments));
    expect(gateEntries.at(-1)).toMatchObject({
      decision: 'refuse',
      code: 'needs_confirmation',
      proposal: { name: 'cancel_appointment' },
    });
    // The refusal took the proper path: Alex's own appointments are shown for a choice.
    expect((await server!.store.getConversation(id))!.state).toBe('PresentingAppointments');
  });

  it(
    'a selection of an id that was never presented is no selection, and a proposal with invalid arguments is ' +
      'not executed',
    async () => {
      const { say, id } = await session((said) => {
        if (said === 'verify me') return verify;
        if (said === 'cancel') return { toolCalls: [{ name: 'list_appointments', arguments: { purpose: 'cancel' } }] };
        if (said === 'jordan one')
          return { toolCalls: [{ name: 'select_appointment', arguments: { appointmentId: 'apt_jordan_1' } }] };
        return { toolCalls: [{ name: 'list_appointments', arguments: { limit: 'many' } }] };
      });
      await say('verify me');
      await say('cancel');
      const refused = await say('jordan one');
      // Not offered: the caller's own appointments are listed again to pick from (decision 005, repair).
      expect(refused.text).toMatch(/not one of their appointments listed: say so, list them below again/);
      expect((await server!.store.getConversation(id))!.state).toBe('PresentingAppointments');
      await say('garbage');
      const [lastTurn] = (await server!.store.listTurns(id, { limit: 1 })).slice(-1);
      const calls = await server!.store.listToolCalls(id, { turnIds: [lastTurn!.id] });
      expect(calls.map((call) => [call.name, JSON.parse(call.arguments).code])).toEqual([
        ['gate', 'invalid_arguments'],
      ]);
      expect((await server!.store.listToolCalls(id)).filter((call) => call.name === 'list_appointments')).toHaveLength(
        1,
      );
    },
  );

  it(
    'an interpreter response with 50 tool calls runs one decision; the rest are never run, and the gate audit ' +
      'counts them',
    async () => {
      const fifty = {
        toolCalls: Array.from({ length: 50 }, () => ({ name: 'list_appointments', arguments: { purpose: 'info' } })),
      };
      const { say, id } = await session((said) => (said === 'verify me' ? verify : fifty));
      await say('verify me');
      await say('list them all, fifty times');
      const [lastTurn] = (await server!.store.listTurns(id, { limit: 1 })).slice(-1);
      const calls = await server!.store.listToolCalls(id, { turnIds: [lastTurn!.id] });
      expect(calls.filter((call) => call.name === 'list_appointments')).toHaveLength(1);
      expect(JSON.parse(calls.find((call) => call.name === 'gate')!.arguments)).toMatchObject({
        decision: 'run',
        ignoredProposals: 49,
      });
    },
  );

  it('a yes with nothing pending runs nothing; a model proposing the side effect itself is refused', async () => {
    const { say, id } = await session((said) =>
      said === 'verify me'
        ? verify
        : said === 'yes'
          ? { toolCalls: [{ name: 'confirm', arguments: { answer: 'yes' } }] }
          : { toolCalls: [{ name: 'create_appointment', arguments: { slotId: 'slot_20260602_0900' } }] },
    );
    await say('verify me');
    await say('yes');
    await say('book slot_20260602_0900');
    expect(await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 10)).toHaveLength(2);
    const decisions = (await server!.store.listToolCalls(id))
      .filter((call) => call.name === 'gate')
      .map((call) => JSON.parse(call.arguments).code ?? JSON.parse(call.arguments).decision);
    expect(decisions).toEqual(['run', 'not_offered', 'needs_confirmation']);
    // The booking intent took the address-first path.
    expect((await server!.store.getConversation(id))!.state).toBe('PendingScheduleDetails');
  });

  it(
    'a confirmation question is narrated with what it confirms: ' + 'the appointment, and for a move the new window',
    async () => {
      const { say, provider } = await session((said) => {
        if (said === 'verify me') return verify;
        if (said === 'reschedule')
          return { toolCalls: [{ name: 'list_appointments', arguments: { purpose: 'reschedule' } }] };
        if (said === 'the first')
          return { toolCalls: [{ name: 'select_appointment', arguments: { appointmentId: 'apt_alex_1' } }] };
        return { toolCalls: [{ name: 'select_slot', arguments: { slotId: 'slot_20260602_1300' } }] };
      });
      await say('verify me');
      await say('reschedule');
      await say('the first');
      await say('the afternoon one');
      const narration = provider.requests
        .filter((request) => request.messages[0]!.content.startsWith('[service-desk:narrate]'))
        .at(-1)!.messages[0]!.content;
      expect(narration).toContain(
        'Fact: Ask the caller to confirm moving the selected appointment to the selected window (yes or no).',
      );
      expect(narration).toContain('Selected appointment: Quarterly pest control on Thursday, June 4, 9:00–11:00 AM');
      expect(narration).toContain('Selected window: Tuesday, June 2, 1:00–3:00 PM');
    },
  );

  it(
    'an unknown phone and a wrong ZIP give the narrator the same facts: whether a phone is a ' +
      "customer's is never told",
    async () => {
      const { say, provider } = await session((said) => ({
        toolCalls: [
          {
            name: 'verify_account',
            arguments:
              said === 'unknown phone'
                ? { phone: '+14155550199', zip: '94107' }
                : { phone: '+14155550100', zip: '11111' },
          },
        ],
      }));
      const unknownPhone = await say('unknown phone');
      const wrongZip = await say('wrong zip');
      expect(unknownPhone.text).toBe(wrongZip.text);
      const narrated = provider.requests
        .filter((request) => request.messages[0]!.content.startsWith('[service-desk:narrate]'))
        .slice(-2)
        .map((request) => request.messages[0]!.content);
      expect(narrated[0]).toBe(narrated[1]);
      expect(narrated[0]).not.toMatch(/unknown_phone|zip_mismatch|phone.*(not|no) .*(found|known|on file)/i);
    },
  );

  it(
    'JSON-looking narration never reaches the client; the acknowledgement arrives before any tool result and ' +
      'first_token_ms is recorded',
    async () => {
      const { say, client, id } = await session(
        () => verify,
        () => ({ text: '{"answer":"You are verified, Alex."}' }),
      );
      const reply = await say('verify me');
      const turnEvents = client.events.filter((event) => event.turnId === 2);
      const tokens = turnEvents
        .filter((event) => event.type === 'token')
        .map((event) => ('text' in event ? event.text : ''));
      expect(tokens.join('')).not.toContain('{');
      expect(reply.text).not.toContain('{"answer"');
      const firstToken = turnEvents.findIndex((event) => event.type === 'token');
      const firstToolResult = turnEvents.findIndex(
        (event) => event.type === 'status' && (event as { data?: { phase?: string } }).data?.phase === 'finished',
      );
      expect(firstToken).toBeGreaterThanOrEqual(0);
      expect(firstToolResult).toBeGreaterThan(firstToken);
      const turns = await server!.store.listTurns(id);
      expect(turns.at(-1)!.firstTokenMs).not.toBeNull(); // the acknowledgement's (the JSON greeting streamed nothing)
    },
  );

  it('when every model call fails, the caller gets the fixed fallback and the dialog is unchanged', async () => {
    const provider = createScriptedProvider((request) =>
      request.messages[0]?.content.startsWith('[service-desk:narrate]') && lastUser(request) === ''
        ? { text: 'Hello!' }
        : { error: new Error('model down') },
    );
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z' }, { provider });
    const id = (await server.request('POST', '/api/conversations', { flow: 'service-desk' })).body.result.id as string;
    await server.engine.idle();
    await server.request('POST', `/api/conversations/${id}/message`, { text: '4155550100 94107' });
    await server.engine.idle();
    const messages = await server.store.listMessages(id);
    expect(messages.at(-1)).toMatchObject({ role: 'assistant' });
    expect((await server.store.getConversation(id))!.state).toBe('CollectingVerification');
  });
});
