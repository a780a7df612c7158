import { describe, expect, it } from 'vitest';
import { emptyProfile } from '../../src/core/profile.ts';
import { demoCrmQueries } from '../../src/flows/service-desk/demo-crm-queries.ts';
import { goIdQueries } from '../../src/store/go-ids-queries.ts';
import { ERASED_TICKET_REASON } from '../../src/store/participant-erasure.ts';
import type { Store } from '../../src/store/store.ts';
import { scanDatabase as scan } from '../kit/database-scan.ts';
import {
  at,
  conversation,
  inboxItem,
  message,
  outboxItem,
  participant,
  phone,
  schedule,
  T0,
  timer,
  toolCall,
  turn,
  uid,
} from './store-fixtures.ts';

/** What identifies one person: their number (as stored and as WhatsApp's digits), a name, a word they used. */
interface Needles {
  phone: string;
  name: string;
  word: string;
}

const needlesOf = (needles: Needles) => [needles.phone, needles.phone.slice(1), needles.name, needles.word];

/**
 * A participant with something of theirs in every table that can hold it, written through the store's
 * operations and the flows' own queries (the demo CRM, the Go id map) as the services write them.
 */
async function personEverywhere(store: Store, needles: Needles) {
  const { name, word } = needles;
  const p = participant({ phoneNumber: needles.phone, name: `Wilhelmina ${name}` });
  const c = conversation(p.id, { flow: 'assistant' });
  await store.insertParticipant(p);
  await store.insertConversation(c);
  await store.appendMessages([
    message(c.id, { text: `I walked past the ${word} today`, createdAt: at(0) }),
    message(c.id, { role: 'assistant', source: 'model', text: `Well done, ${name}!`, createdAt: at(1) }),
  ]);
  const profile = emptyProfile(p.id, T0);
  await store.saveProfile({ ...profile, fields: { motivational_frame: `the ${word}` }, lastHabitPrompt: name });
  await store.insertSchedule(schedule(p.id));
  await store.scheduleTimer(timer(c.id, p.id, { payload: { text: `Remember the ${word}` } }));
  const inConversation = inboxItem({ sender: p.phoneNumber, text: word, participantId: p.id, conversationId: c.id });
  await store.insertInbox(inConversation);
  await store.insertInbox(inboxItem({ sender: p.phoneNumber, text: word, participantId: p.id }));
  await store.insertInbox(inboxItem({ sender: p.phoneNumber, text: `before ${word}`, status: 'ignored' }));
  const out = outboxItem(c.id, { participantId: p.id, channel: 'whatsapp', recipient: p.phoneNumber, text: name });
  await store.enqueueOutbox([out]);
  const providerId = uid('wamid');
  await store.markOutboxSent(out.id, at(2), 1, providerId);
  const error = `${p.phoneNumber.slice(1)} is not on WhatsApp`;
  await store.recordDeliveryReceipt({
    channel: 'whatsapp',
    providerMessageId: providerId,
    status: 'failed',
    at: at(3),
    error,
  });
  const t = turn(c.id, { error: `the model quoted ${word}` });
  await store.insertTurn(t, [toolCall(c.id, t.id, { arguments: JSON.stringify({ name }) })]);
  await store.insertToolCalls([toolCall(c.id, uid('turn'), { result: `noted ${word}` })]);
  const payload = { role: 'assistant', text: `Well done, ${name}!` };
  await store.appendEvents([{ conversationId: c.id, seq: 1, turnNo: 1, type: 'final', payload, at: at(1) }]);
  await store.recordContactInbound(
    { channel: 'twilio', contactId: p.phoneNumber, participantId: p.id, phoneNumber: p.phoneNumber },
    at(0),
  );
  await store.recordContactInbound(
    { channel: 'whatsapp', contactId: p.phoneNumber.slice(1), participantId: p.id, phoneNumber: p.phoneNumber },
    at(0),
  );
  await store.saveFlowState(c.id, { callerName: name }, at(0));
  await store.acquireLease(c.id, 'process-a', at(0), at(60_000));
  await store.followEvents([c.id], 'process-a', at(60_000));
  await store.addNote({ id: uid('note'), conversationId: c.id, person: p.id, text: word, createdAt: at(0) });
  await store.saveEmbeddings('m1', [{ conversationId: c.id, seq: 1, vector: Float32Array.from([1, 0]) }], at(1));

  // A desk session started for them (the operator gave their number), and one for their number
  // from before they were enrolled: both theirs, with a ticket each.
  const desk = conversation(null, { channel: 'web', flow: 'service-desk' });
  const before = conversation(null, { channel: 'web', flow: 'assistant' });
  for (const session of [desk, before]) await store.insertConversation(session);
  await store.saveSessionCaller(desk.id, { phone: p.phoneNumber, person: p.id }, at(0));
  await store.saveSessionCaller(before.id, { phone: p.phoneNumber, person: `tel:${p.phoneNumber}` }, at(0));
  await store.appendMessages([message(desk.id, { text: `My name is ${name}, call me about the ${word}` })]);
  await store.addNote({
    id: uid('note'),
    conversationId: before.id,
    person: `tel:${p.phoneNumber}`,
    text: `likes the ${word}`,
    createdAt: at(0),
  });
  const crm = store.extend(demoCrmQueries).ops;
  const ticketIn = async (conversationId: string) =>
    (
      await crm.createTicket({
        customerId: 'cus_alex',
        reason: `${name} asked about the ${word}`,
        conversationId,
        phone: p.phoneNumber,
        createdAt: at(5),
      })
    ).id;
  const tickets = [await ticketIn(c.id), await ticketIn(desk.id)];
  const goId = `p_${uid('go')}`;
  await store.extend(goIdQueries).ops.recordGoId({ goId, participantId: p.id, importedAt: at(0) });
  return { p, c, desk, before, tickets, goId };
}

/**
 * A web session that is not theirs, for another person, given their number as the one to call
 * back, with a ticket: the session stays, the number goes.
 */
async function sessionGivenTheirNumber(store: Store, theirPhone: string) {
  const session = conversation(null, { channel: 'web', flow: 'service-desk' });
  await store.insertConversation(session);
  await store.saveSessionCaller(session.id, { phone: theirPhone, person: 'id:someone-else' }, at(0));
  await store.appendMessages([message(session.id, { text: 'call my sister back' })]);
  const ticket = await store.extend(demoCrmQueries).ops.createTicket({
    customerId: null,
    reason: 'the caller asked for a person',
    conversationId: session.id,
    phone: theirPhone,
    createdAt: at(5),
  });
  return { session, ticket: ticket.id };
}

/** Tables every participant with data in them shows up in; SQLite's full-text index too. */
const HOLDING = [
  'participants',
  'messages',
  'profiles',
  'timers',
  'inbox',
  'outbox',
  'turns',
  'tool_calls',
  'event_pages',
  'channel_contacts',
  'delivery_receipts',
  'flow_states',
  'session_callers',
  'assistant_notes',
  'crm_tickets',
];
const FULL_TEXT = ['messages_fts', 'messages_fts_content', 'messages_fts_data'];

/** A participant's deletion leaves none of their personal data in any table (decision 024), on both stores. */
export function erasureContract(store: () => Store): void {
  describe('erasure of a deleted participant', () => {
    it('leaves their number, name and words in no table; keeps tickets and another session without them', async () => {
      const gone: Needles = { phone: phone(), name: 'Quorvex', word: 'zorbleflax' };
      const kept: Needles = { phone: phone(), name: 'Yandrisk', word: 'vimbrantle' };
      const doomed = await personEverywhere(store(), gone);
      const bystander = await personEverywhere(store(), kept);
      const other = await sessionGivenTheirNumber(store(), gone.phone);
      const holding = store().dialect === 'sqlite' ? [...HOLDING, ...FULL_TEXT] : HOLDING;

      // The scan finds them where they are: it cannot pass for having looked nowhere.
      const before = await scan(store(), needlesOf(gone));
      expect(Object.keys(before).sort()).toEqual(expect.arrayContaining(holding.sort()));
      expect(Object.values(before).flat()).toEqual(expect.arrayContaining(needlesOf(gone)));
      const bystanderBefore = await scan(store(), needlesOf(kept));
      expect(await store().conversationsOfParticipant(doomed.p.id)).toEqual(
        [doomed.c.id, doomed.desk.id, doomed.before.id].sort(),
      );

      expect(await store().deleteParticipant(doomed.p.id)).toBe(true);

      expect(await scan(store(), needlesOf(gone))).toEqual({});
      // Nothing of anyone else's went.
      expect(await scan(store(), needlesOf(kept))).toEqual(bystanderBefore);
      for (const id of [doomed.c.id, doomed.desk.id, doomed.before.id])
        expect(await store().getConversation(id)).toBeUndefined();

      // The tickets stay the CRM's: the number, the conversation and what was said are gone.
      const tickets = await ticketsOf(store(), [...doomed.tickets, other.ticket, ...bystander.tickets]);
      expect(tickets.slice(0, 2)).toEqual(
        doomed.tickets.map((id) => ({
          id,
          customer_id: 'cus_alex',
          reason: ERASED_TICKET_REASON,
          conversation_id: null,
          phone: null,
          created_at: at(5).getTime(),
        })),
      );
      expect(tickets[2]).toMatchObject({ reason: 'the caller asked for a person', conversation_id: other.session.id });
      expect(tickets[2]!.phone).toBeNull();
      expect(tickets.slice(3).map((ticket) => ticket.phone)).toEqual([kept.phone, kept.phone]);
      expect(await store().getSessionCaller(other.session.id)).toEqual({ phone: null, person: 'id:someone-else' });
      expect(await store().listMessages(other.session.id)).toHaveLength(1);
      // The Go id stays, with no one: a second import does not bring them back.
      const goIds = store().extend(goIdQueries).ops;
      expect(await goIds.findGoId(doomed.goId)).toMatchObject({ participantId: null });
      expect(await goIds.findGoId(bystander.goId)).toMatchObject({ participantId: bystander.p.id });
      expect(await store().deleteParticipant(doomed.p.id)).toBe(false);
    });

    it('keeps a contact that opted out as the number alone, so nothing reaches it until START', async () => {
      const p = participant();
      await store().insertParticipant(p);
      await store().recordContactInbound(
        { channel: 'twilio', contactId: p.phoneNumber, participantId: p.id, phoneNumber: p.phoneNumber },
        at(1000),
      );
      await store().setContactOptOut('twilio', p.phoneNumber, at(2000), at(2000));
      expect(await store().deleteParticipant(p.id)).toBe(true);
      expect(await store().getContact('twilio', p.phoneNumber)).toMatchObject({
        contactId: p.phoneNumber,
        participantId: null,
        phoneNumber: null,
        lastInboundAt: null,
        optedOutAt: at(2000),
      });
    });
  });
}

async function ticketsOf(store: Store, ids: readonly string[]) {
  const rows = await store
    .extend(({ db }) => ({ db }))
    .ops.db.selectFrom('crm_tickets')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
  return ids
    .map((id) => rows.find((row) => row.id === id)!)
    .map((row) => ({ ...row, created_at: Number(row.created_at) }));
}
