import { afterEach, describe, expect, it } from 'vitest';
import { DIALOG_STATES } from '../../src/flows/service-desk/dialog.ts';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { offlineDeskStep } from '../../src/flows/service-desk/offline-policy.ts';
import { createScriptedProvider, type ScriptedStep } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { openWebSession } from '../kit/web-session.ts';

// Spec 004: the narrator is the only source of outbound text, and it speaks from facts, which are
// instructions to it. Whatever the caller says and whatever the model proposes, no reply carries
// a state name, an instruction meant for the narrator, an event or tool name, an id or JSON.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const INTERNAL = new RegExp(
  [
    `\\b(${DIALOG_STATES.join('|')})\\b`,
    'Ask the caller',
    'Ask which',
    'Ask for',
    '\\binternal\\b',
    'Fact:',
    'Could not do that',
    'not valid in',
    'returned:',
    '_(presented|selected|stated|requested|appointment|account)\\b',
    '\\b(apt|slot|cus)_\\w',
    '[{}]',
  ].join('|'),
);

/** Runs each conversation in its own web session; returns every reply with what it answered. */
async function replies(conversations: string[][]): Promise<Array<{ said: string; reply: string }>> {
  const all: Array<{ said: string; reply: string }> = [];
  for (const messages of conversations) {
    const { say } = await openWebSession(server!, 'service-desk');
    for (const said of messages) all.push({ said, reply: (await say(said)).text });
  }
  return all;
}

const leaks = (all: Array<{ said: string; reply: string }>) => all.filter(({ reply }) => INTERNAL.test(reply));

describe('no internal text in any reply', () => {
  it('across scripted conversations with the offline model, odd turns included', async () => {
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z' });
    const all = await replies([
      [
        'When is my next appointment?',
        '415-555-0100, ZIP 94107',
        'my zip is 94107',
        'list my appointments',
        'the first one',
        'what is my address on file?',
        'what do I owe?',
        "what's your cancellation policy?",
        'blah blah',
        'yes',
        'no',
      ],
      [
        'cancel my appointment',
        '+14155550100 11111',
        '+19995550000 94107',
        '+14155550100 94107',
        'the second one',
        "actually, I'd rather reschedule it instead",
        'the first one',
        'actually cancel my appointment instead',
        'hmm',
        'the first one',
        'yes',
        'yes',
      ],
      [
        '4155550100 94107',
        'Schedule another appointment',
        'maybe',
        'yes',
        'the ninth one',
        'the third one',
        'no',
        'I want to reschedule',
        'the first one',
        'the second',
        'hmm',
        'yes',
      ],
      [
        'yes',
        'no',
        'the first one',
        'book slot_20260602_0900',
        'cancel apt_alex_1',
        'my zip is 12345',
        '+14155550100 1234',
      ],
      ['4155550100 94107', 'Schedule another appointment', 'no', 'what?', 'no', 'I want a person'],
      [
        'I want a refund',
        "it's an emergency, send someone today",
        '🐜🐜🐜',
        '415-555-0100 and 11111',
        '415-555-0100 and 22222',
        '415-555-0100 and 33333',
        'I want a person',
        '000 000 0000',
        '415 555 0199',
        'hello?',
      ],
    ]);
    expect(all.length).toBeGreaterThan(40);
    expect(leaks(all)).toEqual([]);
  });

  it('with a model that proposes nonsense in every state (the offline narrator speaking)', async () => {
    const nonsense: ScriptedStep[] = [
      { toolCalls: [{ name: 'delete_account', arguments: {} }] },
      { toolCalls: [{ name: 'confirm', arguments: { answer: 'yes' } }] },
      { toolCalls: [{ name: 'select_slot', arguments: { slotId: 'slot_19990101_0900' } }] },
      { toolCalls: [{ name: 'select_appointment', arguments: { appointmentId: 'apt_jordan_1' } }] },
      { toolCalls: [{ name: 'list_appointments', arguments: { limit: 'many' } }] },
      { toolCalls: [{ name: 'verify_account', arguments: '{not json' }] },
      { toolCalls: [{ name: 'confirm_address', arguments: { confirmed: true } }] },
      { toolCalls: [{ name: 'create_appointment', arguments: { slotId: 'slot_20260602_0900' } }] },
      { toolCalls: [{ name: 'verify_account', arguments: { phone: '+14155550100', zip: '94107' } }] },
    ];
    const script = new Map<string, ScriptedStep>([
      ['verify me', { toolCalls: [{ name: 'verify_account', arguments: { phone: '+14155550100', zip: '94107' } }] }],
      ['cancel', { toolCalls: [{ name: 'list_appointments', arguments: { purpose: 'cancel' } }] }],
      ['reschedule', { toolCalls: [{ name: 'list_appointments', arguments: { purpose: 'reschedule' } }] }],
      ['the first', { toolCalls: [{ name: 'select_appointment', arguments: { appointmentId: 'apt_alex_1' } }] }],
      ...nonsense.map((step, index) => [`nonsense ${index}`, step] as const),
    ]);
    const said = (request: LlmRequest) => [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const provider = createScriptedProvider((request) => {
      if (request.messages[0]?.content.startsWith('[service-desk:decide]')) return script.get(said(request)) ?? {};
      return offlineDeskStep(request)!;
    });
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z' }, { provider });
    const round = nonsense.map((_, index) => `nonsense ${index}`);
    const all = await replies([
      round, // unverified
      ['verify me', ...round], // verified, idle
      ['verify me', 'cancel', ...round], // choosing an appointment
      ['verify me', 'reschedule', 'the first', ...round], // choosing a window
      ['verify me', 'cancel', 'the first', ...round], // asked to confirm a cancellation
    ]);
    expect(leaks(all)).toEqual([]);
  });
});
