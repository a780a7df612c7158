import { afterEach, describe, expect, it } from 'vitest';
import { EventClient } from '../kit/event-client.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { crmOf } from '../kit/crm.ts';

// The service desk end to end with the offline demo policy (deterministic) and the demo CRM:
// HTTP input, WebSocket output (decision 005, issue #9).
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function session() {
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z' });
  const started = await server.request('POST', '/api/conversations', { flow: 'service-desk' });
  expect(started.status).toBe(201);
  const id = started.body.result.id as string;
  const client = await EventClient.connect(server.url, id, '?lastEventId=0'); // replays the greeting
  const finals = () => client.of('final').map((event) => ('text' in event ? String(event.text) : ''));
  await waitFor(() => finals().length === 1, { what: 'greeting' });
  const say = async (text: string) => {
    const before = finals().length;
    const answer = await server!.request('POST', `/api/conversations/${id}/message`, { text });
    expect(answer.status).toBe(202);
    await waitFor(() => finals().length > before, { what: `reply to "${text}"` });
    return finals().at(-1)!;
  };
  const state = async () => (await server!.store.getConversation(id))!.state;
  return { id, client, say, state, finals };
}

describe('service desk (offline policy, demo CRM)', () => {
  it('greets, keeps the intent across ZIP verification, and answers it in the verifying turn', async () => {
    const { say, state, finals } = await session();
    expect(finals()[0]).toMatch(/How can I help/);
    expect(await say('When is my next appointment?')).toMatch(/phone number and 5-digit ZIP/);
    expect(await state()).toBe('CollectingVerification');
    const verified = await say('It is 415-555-0100, ZIP 94107');
    expect(verified).toMatch(/Alex Rivera, you're verified/);
    expect(verified).toMatch(/Quarterly pest control on Thursday, June 4, 9:00–11:00 AM/);
    expect(verified).not.toMatch(/apt_/);
  });

  it('an intent stated in the same message as the ZIP counts too', async () => {
    const { say } = await session();
    const reply = await say('This is 415-555-0100, ZIP 94107 - when is my next appointment?');
    expect(reply).toMatch(/you're verified[\s\S]*Quarterly pest control/);
  });

  it(
    'a participant enrolled on the service desk verifies with the ZIP alone: ' + 'the channel gave their number',
    async () => {
      server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z' });
      const enrolled = await server.request('POST', '/conversation/participants', {
        phone_number: '+12125550123',
        flow: 'service-desk',
      });
      expect(enrolled.status).toBe(201);
      await waitFor(() => server!.sink.to('+12125550123').length === 1, { what: 'greeting' });
      await server.request('POST', '/conversation/inbound', {
        from: '+12125550123',
        text: 'My ZIP is 10001, what do I owe?',
      });
      await waitFor(() => server!.sink.to('+12125550123').length === 2, { what: 'reply' });
      expect(server.sink.to('+12125550123')[1]!.text).toMatch(/Sam Patel, you're verified[\s\S]*\$89\.00/);
      expect(
        (await server.request('POST', '/conversation/participants', { phone_number: '+12125550124', flow: 'nope' }))
          .body,
      ).toMatchObject({ code: 'invalid_request', field: 'flow' });
    },
  );

  it('offers a call back after three wrong ZIP codes, asking for the number to call', async () => {
    const { say } = await session();
    await say('I want to see my bill');
    await say('415-555-0100 and 11111');
    await say('415-555-0100 and 22222');
    const third = await say('415-555-0100 and 33333');
    expect(third).toMatch(/A member of our team can call you back: what phone number should they call\?/);
    const asked = await say('yes please, a person');
    expect(asked).toMatch(/What phone number should they call\?/);
    expect(asked).not.toMatch(/ticket|will call/);
    expect(await say('+1 415 555 0199')).toMatch(/will call you back\. Your ticket number is tkt_/);
  });

  it(
    'stops verifying after three failed attempts: ' + 'the right ZIP then verifies nothing, and a yes gets a person',
    async () => {
      const { say, state } = await session();
      await say('I want to see my bill');
      for (const zip of ['11111', '22222', '33333']) await say(`415-555-0100 and ${zip}`);
      expect(await state()).toBe('PendingEscalationConfirmation');
      const fourth = await say('415-555-0100 and 94107');
      expect(fourth).not.toMatch(/verified|\$129/);
      expect(fourth).toMatch(/A member of our team can call you back/);
      expect(await say('yes')).toMatch(/What phone number should they call\?/);
      expect(await say('415 555 0199')).toMatch(/ticket number is tkt_/);
      expect(await say('415-555-0100 and 94107')).not.toMatch(/verified|\$129/);
    },
  );

  it('cancels only after a selection and a yes, exactly once; a replayed yes changes nothing', async () => {
    const { say, state } = await session();
    await say('I need to cancel an appointment');
    const list = await say('+14155550100 94107');
    expect(list).toMatch(
      /1\. Quarterly pest control[\s\S]*2\. Termite inspection[\s\S]*Which appointment would you like to cancel\?/,
    );
    expect(await state()).toBe('PresentingAppointments');
    expect(await say('the second one')).toMatch(
      /Shall I cancel your Termite inspection on Thursday, June 18, 1:00–3:00 PM\?/,
    );
    expect(await state()).toBe('PendingCancellationConfirmation');
    // A reply that answers nothing leaves the question open: it is asked again, naming the appointment.
    expect(await say('hmm')).toMatch(/Shall I cancel your Termite inspection on Thursday, June 18, 1:00–3:00 PM\?/);
    const cancelled = await say('yes');
    expect(cancelled).toMatch(/I've cancelled your Termite inspection on /);
    // The appointment just cancelled is not listed as if it were still the caller's.
    expect(cancelled).not.toMatch(/Your appointment|Your upcoming appointments|1\. /);
    expect(await state()).toBe('Completed');
    const upcoming = await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 5);
    expect(upcoming.map((a) => a.id)).toEqual(['apt_alex_1']);
    expect(await say('yes')).not.toMatch(/cancelled/);
    expect((await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 5)).map((a) => a.id)).toEqual([
      'apt_alex_1',
    ]);
  });

  it('"no" at the confirmation changes nothing', async () => {
    const { say, state } = await session();
    await say('cancel my appointment please');
    await say('4155550100 94107');
    await say('first');
    expect(await say('no')).toMatch(/left everything as it was/);
    expect(await state()).toBe('VerifiedIdle');
    expect(await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 5)).toHaveLength(2);
  });

  it('rescheduling presents the appointments, then windows (without raw ids), then asks before moving it', async () => {
    const { say, state } = await session();
    await say('4155550100 94107');
    expect(await say('I need to reschedule')).toMatch(/Which appointment would you like to reschedule\?/);
    const windows = await say('the first one');
    expect(windows).toMatch(/Open windows:\n1\. Tuesday, June 2, 9:00–11:00 AM/);
    expect(windows).not.toMatch(/slot_|apt_/);
    expect(await state()).toBe('PresentingSlots');
    expect(await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 1)).toMatchObject([
      { date: '2026-06-04' },
    ]);
    expect(await say('the second')).toMatch(
      /Shall I move your Quarterly pest control on Thursday, June 4, 9:00–11:00 AM to Tuesday, June 2, 1:00–3:00 PM\?/,
    );
    expect(await state()).toBe('PendingRescheduleConfirmation');
    expect(await say('yes')).toMatch(
      /I've moved your Quarterly pest control on Thursday, June 4, 9:00–11:00 AM to Tuesday, June 2, 1:00–3:00 PM/,
    );
    expect(await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 1)).toMatchObject([
      { id: 'apt_alex_1', date: '2026-06-02', windowStart: '13:00' },
    ]);
  });

  it('scheduling another appointment confirms the address, then offers windows, never rescheduling', async () => {
    const { say, state } = await session();
    await say('4155550100 94107');
    const address = await say('Schedule another appointment');
    expect(address).toMatch(/Is the visit for 123 Market St/);
    expect(await state()).toBe('PendingScheduleDetails');
    const windows = await say('yes');
    expect(windows).toMatch(/Open windows:\n1\. Tuesday, June 2, 9:00–11:00 AM/);
    expect(windows).not.toMatch(/slot_/);
    expect(await say('the first one')).toMatch(/Shall I book a visit on Tuesday, June 2, 9:00–11:00 AM\?/);
    expect(await say('yes')).toMatch(
      /I've booked your General service visit on Tuesday, June 2, 9:00–11:00 AM at 123 Market St/,
    );
    expect(await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 5)).toHaveLength(3);
  });

  it(
    'changing your mind at a cancellation confirmation starts the rescheduling; ' + 'a later "sure" never cancels',
    async () => {
      const { say, state } = await session();
      await say('I need to cancel an appointment');
      await say('+14155550100 94107');
      expect(await say('the first one')).toMatch(/Shall I cancel/);
      expect(await say("actually, I'd rather reschedule it instead")).toMatch(
        /Which appointment would you like to reschedule\?/,
      );
      expect(await state()).toBe('PresentingAppointments');
      expect(await say('sure, reschedule')).not.toMatch(/cancelled/);
      expect(await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 5)).toHaveLength(2);
      expect(await say('the first one')).toMatch(/Open windows:/);
      expect(await state()).toBe('PresentingSlots');
    },
  );

  it(
    'changing your mind while choosing a window starts the cancellation; a later "yes" never moves the ' +
      'appointment',
    async () => {
      const { say, state } = await session();
      await say('4155550100 94107');
      await say('I need to reschedule');
      expect(await say('the first one')).toMatch(/Open windows:/);
      const changed = await say('actually cancel my appointment instead');
      expect(changed).toMatch(/Which appointment would you like to cancel\?/);
      expect(changed).not.toMatch(/Could not do that/);
      expect(await state()).toBe('PresentingAppointments');
      await say('yes');
      const upcoming = await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 5);
      expect(upcoming.map((a) => [a.id, a.date, a.windowStart])).toEqual([
        ['apt_alex_1', '2026-06-04', '09:00'],
        ['apt_alex_2', '2026-06-18', '13:00'],
      ]);
    },
  );

  it(
    '"no, never mind" with a single appointment listed selects nothing; "forget it" while choosing a window ' +
      'drops it too',
    async () => {
      const { say, state } = await session();
      await say('I need to cancel my appointment');
      expect(await say('+12125550123 10001')).toMatch(
        /Ant treatment[\s\S]*Which appointment would you like to cancel\?/,
      );
      expect(await say('no, never mind')).toMatch(/left everything as it was/);
      expect(await state()).toBe('VerifiedIdle');
      await say('I need to reschedule');
      await say('the first one');
      expect(await state()).toBe('PresentingSlots');
      expect(await say('forget it')).toMatch(/left everything as it was/);
      expect(await state()).toBe('VerifiedIdle');
      expect(await crmOf(server!.store).upcomingAppointments('cus_sam', '2026-06-01', 5)).toMatchObject([
        { id: 'apt_sam_1', date: '2026-06-03' },
      ]);
    },
  );

  it(
    '"no" to the address offers a person: ' + 'yes opens a ticket, and nothing is booked at the rejected address',
    async () => {
      const { id, say, state } = await session();
      await say('4155550100 94107');
      expect(await say('Schedule another appointment')).toMatch(/Is the visit for 123 Market St/);
      // A verified caller: the team calls the number on the account, so no number is asked for.
      expect(await say('no')).toMatch(/a member of our team can call you back to change it\. Shall I arrange that\?/);
      expect(await state()).toBe('PendingEscalationConfirmation');
      expect(await say('yes')).toMatch(/ticket number is tkt_/);
      expect(await state()).toBe('Completed');
      expect(await say('yes')).not.toMatch(/Open windows|booked/);
      expect(await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 5)).toHaveLength(2);
      const tickets = (await server!.store.listToolCalls(id)).filter((call) => call.name === 'escalate');
      expect(tickets.map((call) => JSON.parse(call.arguments))).toEqual([
        { reason: 'the visit is not at the address on file' },
      ]);
    },
  );

  it('"no" to the address and no to a person ends the booking: a later yes books nothing', async () => {
    const { say, state } = await session();
    await say('4155550100 94107');
    await say('Schedule another appointment');
    await say('no');
    expect(await say('no')).toMatch(/anything else/);
    expect(await state()).toBe('VerifiedIdle');
    expect(await say('yes')).not.toMatch(/Open windows|booked/);
    expect(await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 5)).toHaveLength(2);
  });

  it(
    'records the decision, the gate and every tool call in the audit and the summary, ' + 'with first-token latency',
    async () => {
      const { id, say } = await session();
      await say('4155550100 94107');
      await say('when is my next appointment?');
      const summary = await server!.request('GET', `/api/conversations/${id}/summary`);
      expect(summary.body).toMatch(/gate/);
      expect(summary.body).toMatch(/verify_account/);
      // The change is listed under the turn that verified, not the one after it.
      const verifying = summary.body.split('\n### ').find((section: string) => section.includes('verify_account'));
      expect(verifying).toContain('State change: CollectingVerification → VerifiedIdle');
      const turns = await server!.store.listTurns(id);
      expect(turns.at(-1)!.firstTokenMs).not.toBeNull();
    },
  );
});
