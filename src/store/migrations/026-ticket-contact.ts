import type { Kysely, Migration } from 'kysely';

/**
 * What a person needs to reach the caller behind a service-desk ticket (decision 005): the
 * conversation it was opened in (what was said) and the phone number to call back. A ticket made
 * before this migration has neither. No foreign key: a ticket is the CRM's record, kept apart from
 * the conversation's lifetime, as a real CRM's would be.
 */
export function ticketContactMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('crm_tickets').addColumn('conversation_id', 'text').execute();
      await db.schema.alterTable('crm_tickets').addColumn('phone', 'text').execute();
    },
  };
}
