import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider, type ScriptedStep } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { openWebSession } from '../kit/web-session.ts';
import { crmOf } from '../kit/crm.ts';

// Conversation repair in the service desk (issue #22; Rasa CALM's patterns): corrections, a pick
// that was not offered, a question in passing, "cancel that", an unclear request, a malformed ZIP.
// The scripted interpreter reads the options from its prompt and proposes what a real model
// would; the narrator echoes the facts it is given, so what a caller would hear is checked.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Role = 'acknowledge' | 'decide' | 'narrate';
const roleOf = (request: LlmRequest) => /^\[service-desk:(\w+)\]/.exec(request.messages[0]?.content ?? '')![1] as Role;
const lastUser = (request: LlmRequest) => [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
type Call = { name: string; arguments: unknown };
const propose = (name: string, args: unknown = {}): ScriptedStep => ({ toolCalls: [{ name, arguments: args }] });

/**
 * The id of the listed option whose text has every word given ("Wednesday", "9:00–11:00 AM"), as a model reads
 * its prompt.
 */
function option(request: LlmRequest, kind: 'Appointment' | 'Window', ...words: string[]): string {
  const lines = [...request.messages[0]!.content.matchAll(new RegExp(`^${kind} option \\d+: id (\\S+): (.+)$`, 'gm'))];
  const found = lines.find(([, , text]) => words.every((word) => text!.includes(word)));
  if (!found) throw new Error(`no ${kind} option with ${words.join(' ')} in the prompt`);
  return found[1]!;
}

async function session(decide: (said: string, request: LlmRequest) => ScriptedStep | Call) {
  const narrated: string[] = [];
  const provider = createScriptedProvider((request) => {
    const role = roleOf(request);
    if (role === 'acknowledge') return { text: 'Okay.' };
    if (role === 'decide') {
      const step = decide(lastUser(request), request);
      return 'name' in step ? propose(step.name, step.arguments) : step;
    }
    // What the narrator was told to say, as it would say it: facts, lists and what a question is about.
    const told = request.messages[0]!.content.split('\n').filter((line) =>
      /^(Fact|Appointment \d|Window \d|Selected)/.test(line),
    );
    narrated.push(told.join('\n'));
    return { text: told.join('\n') };
  });
  server = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z', DEFAULT_PHONE_REGION: 'US' },
    { provider },
  );
  const web = await openWebSession(server, 'service-desk');
  const state = async () => (await server!.store.getConversation(web.id))!.state;
  const say = async (text: string) => (await web.say(text)).text;
  return { ...web, say, state, narrated };
}

const VERIFY: Call = { name: 'verify_account', arguments: { phone: '415-555-0100', zip: '94107' } };
const appointmentsOf = async (customer: string) =>
  crmOf(server!.store).upcomingAppointments(customer, '2026-06-01', 10);

/** Nothing a caller sees may name a tool, a state, an internal id or carry raw JSON. */
function expectNothingInternal(client: Awaited<ReturnType<typeof session>>['client']) {
  const seen = client.events
    .filter((event) => ['token', 'final', 'status'].includes(event.type))
    .map((event) => ('text' in event ? String(event.text) : ''));
  expect(seen.length).toBeGreaterThan(0);
  for (const text of seen) {
    expect(text, text).not.toMatch(/\b[a-z]+_[a-z_]+\b/); // tool names (verify_account), ids (apt_alex_1)
    expect(text, text).not.toMatch(/\b(Pending|Presenting|Collecting|Disambiguating|VerifiedIdle|Completed)\w*/);
    expect(text, text).not.toMatch(/[{}]|amountCents|\bcus_|\binv_/);
  }
}

describe('service desk repair (scripted model)', () => {
  it(
    'a correction at the reschedule confirmation picks the other window; ' + 'the yes moves to the corrected one',
    async () => {
      const { say, state, narrated, client } = await session((said, request) => {
        if (said === 'verify me') return VERIFY;
        if (said === 'I want to reschedule') return { name: 'list_appointments', arguments: { purpose: 'reschedule' } };
        if (said === 'the quarterly one')
          return {
            name: 'select_appointment',
            arguments: { appointmentId: option(request, 'Appointment', 'Quarterly') },
          };
        if (said === 'Tuesday afternoon')
          return { name: 'select_slot', arguments: { slotId: option(request, 'Window', 'Tuesday', '1:00–3:00 PM') } };
        if (said === 'no, Wednesday morning')
          return {
            name: 'select_slot',
            arguments: { slotId: option(request, 'Window', 'Wednesday', '9:00–11:00 AM') },
          };
        if (said === 'yes') return { name: 'confirm', arguments: { answer: 'yes' } };
        return {};
      });
      await say('verify me');
      await say('I want to reschedule');
      await say('the quarterly one');
      await say('Tuesday afternoon');
      expect(await state()).toBe('PendingRescheduleConfirmation');
      expect(narrated.at(-1)).toContain('Selected window: Tuesday, June 2, 1:00–3:00 PM');
      await say('no, Wednesday morning');
      expect(await state()).toBe('PendingRescheduleConfirmation');
      expect(narrated.at(-1)).toContain('Fact: Ask the caller to confirm moving the selected appointment');
      expect(narrated.at(-1)).toContain(
        'Selected appointment: Quarterly pest control on Thursday, June 4, 9:00–11:00 AM',
      );
      expect(narrated.at(-1)).toContain('Selected window: Wednesday, June 3, 9:00–11:00 AM');
      await say('yes');
      expect(await state()).toBe('Completed');
      const moved = (await appointmentsOf('cus_alex')).find((a) => a.id === 'apt_alex_1');
      expect(moved).toMatchObject({ date: '2026-06-03', windowStart: '09:00' });
      expectNothingInternal(client);
    },
  );

  it(
    'a pick that was not offered lists the options again; at a confirmation it goes back to ' +
      'choosing, so a yes books nothing',
    async () => {
      const { say, state, narrated, client } = await session((said, request) => {
        if (said === 'verify me') return VERIFY;
        if (said === 'book a new visit') return { name: 'schedule_new_visit', arguments: {} };
        if (said === 'yes, that address') return { name: 'confirm_address', arguments: { confirmed: true } };
        // A real model maps "Saturday at 5" to an id it makes up.
        if (said === 'Saturday at 5pm') return { name: 'select_slot', arguments: { slotId: 'slot_20260606_1700' } };
        if (said === 'the first one')
          return { name: 'select_slot', arguments: { slotId: option(request, 'Window', 'Tuesday', '9:00–11:00 AM') } };
        if (said === 'make it Sunday') return { name: 'select_slot', arguments: { slotId: 'sunday' } };
        if (said === 'yes') return { name: 'confirm', arguments: { answer: 'yes' } };
        return {};
      });
      await say('verify me');
      await say('book a new visit');
      await say('yes, that address');
      expect(await state()).toBe('PresentingSlots');
      await say('Saturday at 5pm');
      expect(await state()).toBe('PresentingSlots');
      expect(narrated.at(-1)).toMatch(/^Fact: What the caller picked is not one of the windows offered/);
      expect(narrated.at(-1)!.match(/^Window \d: /gm)).toHaveLength(5);
      await say('the first one');
      expect(await state()).toBe('PendingScheduleConfirmation');
      await say('make it Sunday');
      expect(await state()).toBe('PresentingSlots');
      expect(narrated.at(-1)).toMatch(/not one of the windows offered[\s\S]*Window 1: Tuesday, June 2, 9:00–11:00 AM/);
      await say('yes'); // a yes to "which one?" confirms nothing
      expect(await appointmentsOf('cus_alex')).toHaveLength(2);
      expect(narrated.at(-1)).toContain('Fact: Ask which window suits the caller.');
      expectNothingInternal(client);
    },
  );

  it('a question in passing mid-booking is answered, then the booking goes on from where it was', async () => {
    const { say, state, narrated, client } = await session((said, request) => {
      if (said === 'verify me') return VERIFY;
      if (said === 'book a new visit') return { name: 'schedule_new_visit', arguments: {} };
      if (said === 'what is your cancellation policy?')
        return { name: 'service_policy', arguments: { topic: 'cancellation' } };
      if (said === 'yes') return { name: 'confirm_address', arguments: { confirmed: true } };
      if (said === 'wait, do I owe you anything?') return { name: 'open_invoices', arguments: {} };
      if (said === 'Wednesday afternoon')
        return { name: 'select_slot', arguments: { slotId: option(request, 'Window', 'Wednesday', '1:00–3:00 PM') } };
      if (said === 'yes, book it') return { name: 'confirm', arguments: { answer: 'yes' } };
      return {};
    });
    await say('verify me');
    await say('book a new visit');
    await say('what is your cancellation policy?');
    expect(await state()).toBe('PendingScheduleDetails');
    expect(narrated.at(-1)).toMatch(
      new RegExp(
        '^Fact: Our policy: Appointments can be cancelled free of charge[\\s\\S]*go back to what was pending' +
          '[\\s\\S]*confirm the visit is at the address on file: 123 Market St',
      ),
    );
    await say('yes');
    await say('wait, do I owe you anything?');
    expect(await state()).toBe('PresentingSlots');
    expect(narrated.at(-1)).toMatch(
      new RegExp(
        '^Fact: The caller has 1 open invoice: \\$129\\.00 due Thursday, June 11\\.\\nFact: Having answered that' +
          '[\\s\\S]*Ask which window suits',
      ),
    );
    expect(narrated.at(-1)!.match(/^Window \d: /gm)).toHaveLength(5);
    await say('Wednesday afternoon');
    await say('yes, book it');
    expect(await state()).toBe('Completed');
    expect((await appointmentsOf('cus_alex')).map((a) => [a.date, a.windowStart])).toContainEqual([
      '2026-06-03',
      '13:00',
    ]);
    expectNothingInternal(client);
  });

  it(
    'a 4-digit ZIP code is asked for again as a ZIP code of 5 digits, ' + 'and does not count as a failed attempt',
    async () => {
      const { say, state, narrated, id, client } = await session((said) => {
        if (said === 'my number is 415-555-0100 and my zip is 9410')
          return { name: 'verify_account', arguments: { phone: '415-555-0100', zip: '9410' } };
        if (said === 'sorry, 94107') return VERIFY;
        return {};
      });
      await say('my number is 415-555-0100 and my zip is 9410');
      expect(narrated.at(-1)).toBe(
        'Fact: The ZIP code the caller gave is not 5 digits: say that a ZIP code has 5 digits and ask for it again.',
      );
      expect(await state()).toBe('CollectingVerification');
      expect(await server!.store.getFlowState(id)).toMatchObject({ zipAttempts: 0 });
      await say('sorry, 94107');
      expect(narrated.at(-1)).toContain('Fact: The caller is verified as Alex Rivera.');
      expectNothingInternal(client);
    },
  );

  it(
    'an unclear request names its candidates; "neither" goes back to the task it interrupted; ' +
      '"cancel that" drops it',
    async () => {
      const { say, state, narrated, client } = await session((said, request) => {
        if (said === 'verify me') return VERIFY;
        if (said === 'I need to sort out my appointment')
          return { name: 'clarify_intent', arguments: { candidates: ['reschedule', 'cancel'] } };
        if (said === 'move it') return { name: 'pick_intent', arguments: { intent: 'reschedule' } };
        if (said === 'the termite one')
          return {
            name: 'select_appointment',
            arguments: { appointmentId: option(request, 'Appointment', 'Termite') },
          };
        if (said === 'hmm, what about the other thing')
          return { name: 'clarify_intent', arguments: { candidates: ['billing', 'human'] } };
        if (said === 'neither, go on') return { name: 'decline', arguments: {} };
        if (said === 'cancel that') return { name: 'decline', arguments: {} };
        return {};
      });
      await say('verify me');
      await say('I need to sort out my appointment');
      expect(await state()).toBe('DisambiguatingIntent');
      expect(narrated.at(-1)).toBe(
        'Fact: The request is unclear. Ask whether the caller wants to move an appointment to another time or ' +
          'cancel an appointment.',
      );
      await say('move it');
      expect(await state()).toBe('PresentingAppointments');
      expect(narrated.at(-1)).toContain('Fact: Ask which appointment to reschedule.');
      await say('the termite one');
      expect(await state()).toBe('PresentingSlots');
      await say('hmm, what about the other thing');
      expect(await state()).toBe('DisambiguatingIntent');
      expect(narrated.at(-1)).toMatch(/check the bill or speak with a person\.$/);
      await say('neither, go on');
      expect(await state()).toBe('PresentingSlots');
      expect(narrated.at(-1)).toMatch(/Selected appointment: Termite inspection/);
      expect(narrated.at(-1)).toContain('Fact: Ask which window suits the caller.');
      await say('cancel that');
      expect(await state()).toBe('VerifiedIdle');
      expect(narrated.at(-1)).toBe('Fact: Nothing was changed, as the caller said no.');
      expect((await appointmentsOf('cus_alex')).map((a) => a.date)).toEqual(['2026-06-04', '2026-06-18']);
      expectNothingInternal(client);
    },
  );
});

describe('service desk repair (offline demo model)', () => {
  it('reads a correction, a 4-digit ZIP and "cancel that" the same way', async () => {
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z' });
    const { say } = await openWebSession(server, 'service-desk');
    const text = async (said: string) => (await say(said)).text;
    expect(await text('415-555-0100, zip 9410')).toMatch(/A ZIP code has 5 digits/);
    await text('415-555-0100, 94107');
    await text('I want to reschedule');
    await text('the first');
    expect(await text('the second')).toMatch(
      /Shall I move your Quarterly pest control .* to Tuesday, June 2, 1:00–3:00 PM/,
    );
    // Thursday's morning window is the visit's own time: not offered, so "Thursday" is the afternoon.
    expect(await text('no, Thursday')).toMatch(
      /Shall I move your Quarterly pest control .* to Thursday, June 4, 1:00–3:00 PM/,
    );
    expect(await text('cancel that')).toMatch(/left everything as it was/);
  });
});
