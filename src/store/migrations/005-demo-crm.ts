import type { Kysely, Migration } from 'kysely';

/**
 * The demo CRM's tables (decision 005), a stand-in for a real CRM seeded at start when empty, and
 * flows' per-conversation state.
 */
export function demoCrmMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await s
        .createTable('crm_customers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('phone', 'text', (c) => c.notNull())
        .addColumn('zip', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .execute();
      await s.createIndex('crm_customers_phone').on('crm_customers').column('phone').execute();
      await s
        .createTable('crm_slots')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('date', 'text', (c) => c.notNull())
        .addColumn('window_start', 'text', (c) => c.notNull())
        .addColumn('window_end', 'text', (c) => c.notNull())
        .addColumn('available', 'integer', (c) => c.notNull())
        .execute();
      await s.createIndex('crm_slots_date').on('crm_slots').columns(['available', 'date', 'window_start']).execute();
      await s
        .createTable('crm_appointments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('crm_customers.id'))
        .addColumn('service', 'text', (c) => c.notNull())
        .addColumn('date', 'text', (c) => c.notNull())
        .addColumn('window_start', 'text', (c) => c.notNull())
        .addColumn('window_end', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('notes', 'text')
        .addColumn('slot_id', 'text')
        .execute();
      await s
        .createIndex('crm_appointments_customer')
        .on('crm_appointments')
        .columns(['customer_id', 'status', 'date'])
        .execute();
      await s
        .createTable('crm_invoices')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text', (c) => c.notNull().references('crm_customers.id'))
        .addColumn('amount_cents', 'integer', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('due_date', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .execute();
      // A flow's working state per conversation, as JSON (the service desk's dialog).
      await s
        .createTable('flow_states')
        .addColumn('conversation_id', 'text', (c) => c.primaryKey().references('conversations.id').onDelete('cascade'))
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await s
        .createTable('crm_tickets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('customer_id', 'text')
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
