import type { Selectable } from 'kysely';
import type { ChannelContact } from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { ChannelContactsTable } from './schema.ts';
import { fromMs, fromMsOrNull, toMs, toMsOrNull } from './codec.ts';

type ContactOperations = Pick<
  StoreOperations,
  'recordContactInbound' | 'getContact' | 'findContactOfParticipant' | 'setContactOptOut'
>;

export function contactQueries({ db }: QueryContext): ContactOperations {
  const get = async (channel: string, contactId: string) => {
    const row = await db
      .selectFrom('channel_contacts')
      .selectAll()
      .where('channel', '=', channel)
      .where('contact_id', '=', contactId)
      .executeTakeFirst();
    return row && toContact(row);
  };

  return {
    getContact: get,

    async recordContactInbound(contact, at) {
      const atMs = toMs(at);
      await db
        .insertInto('channel_contacts')
        .values({
          channel: contact.channel,
          contact_id: contact.contactId,
          participant_id: contact.participantId,
          phone_number: contact.phoneNumber,
          last_inbound_at: atMs,
          opted_out_at: null,
          updated_at: atMs,
        })
        .onConflict((oc) =>
          oc.columns(['channel', 'contact_id']).doUpdateSet((eb) => ({
            participant_id: eb.fn.coalesce('excluded.participant_id', 'channel_contacts.participant_id'),
            phone_number: eb.fn.coalesce('excluded.phone_number', 'channel_contacts.phone_number'),
            last_inbound_at: eb
              .case()
              .when('channel_contacts.last_inbound_at', 'is', null)
              .then(eb.ref('excluded.last_inbound_at'))
              .when('channel_contacts.last_inbound_at', '<', eb.ref('excluded.last_inbound_at'))
              .then(eb.ref('excluded.last_inbound_at'))
              .else(eb.ref('channel_contacts.last_inbound_at'))
              .end(),
            updated_at: atMs,
          })),
        )
        .execute();
      return (await get(contact.channel, contact.contactId))!;
    },

    async findContactOfParticipant(channel, participantId) {
      const row = await db
        .selectFrom('channel_contacts')
        .selectAll()
        .where('channel', '=', channel)
        .where('participant_id', '=', participantId)
        .orderBy('last_inbound_at', (ob) => ob.desc().nullsLast())
        .limit(1)
        .executeTakeFirst();
      return row && toContact(row);
    },

    async setContactOptOut(channel, contactId, at, now) {
      await db
        .insertInto('channel_contacts')
        .values({
          channel,
          contact_id: contactId,
          participant_id: null,
          phone_number: null,
          last_inbound_at: null,
          opted_out_at: toMsOrNull(at),
          updated_at: toMs(now),
        })
        .onConflict((oc) =>
          oc.columns(['channel', 'contact_id']).doUpdateSet({ opted_out_at: toMsOrNull(at), updated_at: toMs(now) }),
        )
        .execute();
      return (await get(channel, contactId))!;
    },
  };
}

function toContact(row: Selectable<ChannelContactsTable>): ChannelContact {
  return {
    channel: row.channel,
    contactId: row.contact_id,
    participantId: row.participant_id,
    phoneNumber: row.phone_number,
    lastInboundAt: fromMsOrNull(row.last_inbound_at),
    optedOutAt: fromMsOrNull(row.opted_out_at),
    updatedAt: fromMs(row.updated_at),
  };
}
