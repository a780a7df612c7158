import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { EventClient } from '../kit/event-client.ts';
import { waitFor } from '../kit/wait-for.ts';
import { crmOf } from '../kit/crm.ts';

// A message to a caller never promises what the system will not do, nor claims what did not
// happen (decision 005), with the offline demo model: a change another session got to first is
// told as not done, a call back is promised only with a number to call, a window the caller is
// already booked in is not offered, and what the desk cannot do or did not follow is said so.
let server: TestServer | undefined;
let clients: EventClient[] = [];
afterEach(async () => {
  for (const client of clients) client.close();
  clients = [];
  await server?.close();
  server = undefined;
});

const CLOCK_START = '2026-06-01T17:00:00Z';
const start = async () => {
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START });
};

/** A desk session (for `caller` when given) whose `say` resolves with the reply's text. */
async function desk(caller?: { phone: string }) {
  const body = caller ? { flow: 'service-desk', caller } : { flow: 'service-desk' };
  const id = (await server!.request('POST', '/api/conversations', body)).body.result.id as string;
  const client = await EventClient.connect(server!.url, id, '?lastEventId=0');
  clients.push(client);
  const finals = () => client.of('final').map((event) => String((event as { text?: string }).text));
  await waitFor(() => finals().length === 1, { what: 'greeting' });
  const say = async (text: string) => {
    const before = finals().length;
    expect((await server!.request('POST', `/api/conversations/${id}/message`, { text })).status).toBe(202);
    await waitFor(() => finals().length > before, { what: `reply to ${text}` });
    return finals().at(-1)!;
  };
  return { id, say, state: () => stateOf(id) };
}

const stateOf = async (id: string) => (await server!.store.getConversation(id))!.state;
const tickets = () =>
  server!.store.extend((ctx) => ({ all: () => ctx.db.selectFrom('crm_tickets').selectAll().execute() })).ops.all();
const calls = async (id: string, name: string) =>
  (await server!.store.listToolCalls(id)).filter((call) => call.name === name).map((call) => call.status);

describe('service desk: a change another session got to first', () => {
  it(
    'two sessions book the same window: the second is told it was taken and nothing changed, and picks from ' +
      'the windows still open',
    async () => {
      await start();
      const [a, b] = [await desk(), await desk()];
      for (const session of [a, b])
        for (const text of ['4155550100 94107', 'Book a new appointment', 'yes', 'the first one'])
          await session.say(text);
      expect(await a.say('yes')).toMatch(/I've booked your General service visit on Tuesday, June 2, 9:00–11:00 AM/);

      const lost = await b.say('yes');
      expect(lost).toMatch(/that window was taken in the meantime, so nothing was changed/);
      expect(lost).toMatch(/Open windows:\n1\. Tuesday, June 2, 1:00–3:00 PM\n/);
      expect(lost).not.toMatch(/Tuesday, June 2, 9:00–11:00 AM|didn't quite follow|booked/);
      expect(lost).toMatch(/Which of these windows works for you\?$/);
      expect(await b.state()).toBe('PresentingSlots');
      expect(await calls(b.id, 'create_appointment')).toEqual(['error']);

      expect(await b.say('the first one')).toMatch(/Shall I book a visit on Tuesday, June 2, 1:00–3:00 PM\?/);
      expect(await b.say('yes')).toMatch(/I've booked your General service visit on Tuesday, June 2, 1:00–3:00 PM/);
      const booked = await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 10);
      expect(booked.map((appointment) => `${appointment.date} ${appointment.windowStart}`).sort()).toEqual([
        '2026-06-02 09:00',
        '2026-06-02 13:00',
        '2026-06-04 09:00',
        '2026-06-18 13:00',
      ]);
    },
  );

  it('two sessions cancel one appointment: the second is told it is no longer scheduled, nothing changed', async () => {
    await start();
    const [a, b] = [await desk(), await desk()];
    for (const session of [a, b])
      for (const text of ['4155550100 94107', 'I need to cancel an appointment', 'the first one'])
        await session.say(text);
    expect(await a.say('yes')).toMatch(/I've cancelled your Quarterly pest control/);
    const lost = await b.say('yes');
    expect(lost).toMatch(/I couldn't change that appointment: it is no longer scheduled, so nothing was changed\./);
    expect(lost).toMatch(/What would you like to do next\?$/);
    expect(lost).not.toMatch(/didn't quite follow|I've cancelled/);
    expect(await b.state()).toBe('VerifiedIdle');
    expect(await calls(b.id, 'cancel_appointment')).toEqual(['error']);
  });
});

describe('service desk: a call back only with a number to call', () => {
  it(
    'an unverified caller with no phone is asked for one before anything is promised; the ticket has it, the ' +
      "conversation and the server's time",
    async () => {
      await start();
      const { id, say, state } = await desk();
      for (const zip of ['11111', '22222', '33333']) await say(`415-555-0100 and ${zip}`);
      expect(await state()).toBe('PendingEscalationConfirmation');
      const asked = await say('I want to talk to a person');
      expect(asked).toMatch(/What phone number should they call\?/);
      expect(asked).not.toMatch(/will call you back|ticket/i);
      expect(await say('yes')).toMatch(/What phone number should they call\?/);
      expect(await say('000 000 0000')).toMatch(/doesn't look like a phone number/);
      expect(await tickets()).toEqual([]);

      const told = await say('(415) 555-0199');
      expect(told).toMatch(/A member of our team will call you back\. Your ticket number is tkt_\w+\./);
      expect(await state()).toBe('Completed');
      expect(await tickets()).toEqual([
        {
          id: /tkt_\w+/.exec(told)![0],
          customer_id: null,
          reason: 'the caller could not be verified',
          conversation_id: id,
          phone: '+14155550199',
          // The virtual clock's time, not the wall clock's.
          created_at: Date.parse(CLOCK_START),
        },
      ]);
    },
  );

  it('a verified caller, or one whose phone the session was given, is called back on that number', async () => {
    await start();
    const verified = await desk();
    await verified.say('4155550100 94107');
    expect(await verified.say('I want to talk to a person')).toMatch(/will call you back\. Your ticket number is/);
    const known = await desk({ phone: '+12125550123' });
    for (const zip of ['11111', '22222', '33333']) await known.say(zip);
    expect(await known.say('yes')).toMatch(/will call you back\. Your ticket number is/);
    const rows = await tickets();
    expect(rows.map((row) => [row.conversation_id, row.customer_id, row.phone]).sort()).toEqual(
      [
        [verified.id, 'cus_alex', '+14155550100'],
        [known.id, null, '+12125550123'],
      ].sort(),
    );
  });
});

describe("service desk: the caller's own appointments", () => {
  it('never offers a window that overlaps an appointment the caller already has', async () => {
    await start();
    const { say } = await desk();
    await say('4155550100 94107');
    await say('Book a new appointment');
    const windows = await say('yes');
    // Alex's quarterly pest control is on Thursday, June 4, 9:00–11:00 AM.
    expect(windows).toMatch(/Open windows:\n/);
    expect(windows).not.toMatch(/Thursday, June 4, 9:00–11:00 AM/);
    expect(windows).toMatch(/5\. Thursday, June 4, 1:00–3:00 PM/);
    expect(await say('the fifth one')).toMatch(/Shall I book a visit on Thursday, June 4, 1:00–3:00 PM\?/);
  });
});

describe('service desk: fallbacks that claim nothing', () => {
  it('an unverified caller saying nothing usable is asked to verify again; a refund is not done here', async () => {
    await start();
    const { say } = await desk();
    for (const said of ['yes', '🐜🐜🐜']) {
      const reply = await say(said);
      expect(reply, said).toMatch(/I first need to verify your account\. What's the phone number and 5-digit ZIP/);
      expect(reply, said).not.toMatch(/Got it|anything else|I can help with that/);
    }
    const refund = await say('I want a refund');
    expect(refund).toMatch(/that's not something I can do here\. I can tell you about your appointments/);
    expect(refund).not.toMatch(/Got it|I can help with that/);
    const { say: sayKnown } = await desk({ phone: '+14155550100' });
    expect(await sayKnown('yes')).toMatch(/I first need to verify your account\. What's the 5-digit ZIP code on it\?/);
  });

  it('a verified caller hears what cannot be done here and what can, never "got it"', async () => {
    await start();
    const { say, state } = await desk();
    await say('4155550100 94107');
    const emergency = await say("Please send a technician today, it's an emergency");
    expect(emergency).toMatch(/that's not something I can do here/);
    expect(emergency).toMatch(/have a member of our team call you back\.\nWhat would you like to do next\?$/);
    expect(emergency).not.toMatch(/Got it|anything else/);
    const unclear = await say('yes');
    expect(unclear).toMatch(/I'm not sure what you'd like me to do\. I can tell you about your appointments/);
    expect(unclear).not.toMatch(/Got it|anything else/);
    // At a pending question, the refusal comes with the question again.
    await say('I need to cancel an appointment');
    const pending = await say('I want a refund for it');
    expect(pending).toMatch(/not something I can do here[\s\S]*Which appointment would you like to cancel\?$/);
    expect(await state()).toBe('PresentingAppointments');
  });
});
