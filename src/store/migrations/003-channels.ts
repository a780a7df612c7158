import type { Kysely, Migration } from 'kysely';

/** Real channels (decision 003): contacts, provider message ids and delivery receipts. */
export function channelsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await s
        .createTable('channel_contacts')
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('contact_id', 'text', (c) => c.notNull())
        // An opt-out outlives the participant: deleting them must not make the number reachable.
        .addColumn('participant_id', 'text', (c) => c.references('participants.id').onDelete('set null'))
        .addColumn('phone_number', 'text')
        .addColumn('last_inbound_at', 'bigint')
        .addColumn('opted_out_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('channel_contacts_pk', ['channel', 'contact_id'])
        .execute();
      await s
        .createIndex('channel_contacts_participant')
        .on('channel_contacts')
        .columns(['channel', 'participant_id'])
        .execute();

      await s.alterTable('outbox').addColumn('provider_message_id', 'text').execute();
      await s.alterTable('outbox').addColumn('delivery_status', 'text').execute();
      await s.alterTable('outbox').addColumn('delivery_status_at', 'bigint').execute();
      await s.alterTable('outbox').addColumn('delivery_error', 'text').execute();
      await s.createIndex('outbox_provider_message').on('outbox').columns(['channel', 'provider_message_id']).execute();

      await s
        .createTable('delivery_receipts')
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('provider_message_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('error', 'text')
        .addPrimaryKeyConstraint('delivery_receipts_pk', ['channel', 'provider_message_id', 'status'])
        .execute();
    },
  };
}
