import type { Selectable } from 'kysely';
import { CrmError, type Appointment, type Crm, type Customer, type Invoice, type Slot } from './crm.ts';
import type { QueryContext } from '../../store/query-context.ts';
import type { Database } from '../../store/schema.ts';

/** The demo CRM on the store's own database, with seed data for offline demos and tests. */
export interface DemoCrm extends Crm {
  /** Writes the demo customers, appointments, slots and invoices around `today` when there are none. */
  seedIfEmpty(today: string): Promise<boolean>;
}

const newId = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;

export function demoCrmQueries(ctx: QueryContext): DemoCrm {
  const { db } = ctx;
  const appointmentOf = async (customerId: string, appointmentId: string, q = db) => {
    const row = await q.selectFrom('crm_appointments').selectAll().where('id', '=', appointmentId).executeTakeFirst();
    if (!row) throw new CrmError('not_found', `appointment ${appointmentId} does not exist`);
    if (row.customer_id !== customerId)
      throw new CrmError('not_yours', `appointment ${appointmentId} belongs to another customer`);
    if (row.status !== 'scheduled')
      throw new CrmError('not_scheduled', `appointment ${appointmentId} is ${row.status}`);
    return row;
  };
  /** Takes a free slot, in the caller's transaction; false when someone else took it first. */
  const takeSlot = async (q: typeof db, slotId: string) => {
    const result = await q
      .updateTable('crm_slots')
      .set({ available: 0 })
      .where('id', '=', slotId)
      .where('available', '=', 1)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) throw new CrmError('not_available', `slot ${slotId} is not available`);
    return await q.selectFrom('crm_slots').selectAll().where('id', '=', slotId).executeTakeFirstOrThrow();
  };
  /** Refuses a window the customer already has an appointment in (but `moving`, the one being moved). */
  const refuseOverlap = async (q: typeof db, customerId: string, slot: Row<'crm_slots'>, moving?: string) => {
    let clash = q
      .selectFrom('crm_appointments')
      .select('id')
      .where('customer_id', '=', customerId)
      .where('status', '=', 'scheduled')
      .where('date', '=', slot.date)
      .where('window_start', '<', slot.window_end)
      .where('window_end', '>', slot.window_start);
    if (moving) clash = clash.where('id', '!=', moving);
    const found = await clash.executeTakeFirst();
    if (found) throw new CrmError('overlaps', `slot ${slot.id} overlaps appointment ${found.id}`);
  };

  return {
    async findCustomersByPhone(phone) {
      return (await db.selectFrom('crm_customers').selectAll().where('phone', '=', phone).orderBy('id').execute()).map(
        toCustomer,
      );
    },
    async getCustomer(id) {
      const row = await db.selectFrom('crm_customers').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toCustomer(row);
    },
    async upcomingAppointments(customerId, fromDate, limit) {
      const rows = await db
        .selectFrom('crm_appointments')
        .selectAll()
        .where('customer_id', '=', customerId)
        .where('status', '=', 'scheduled')
        .where('date', '>=', fromDate)
        .orderBy('date')
        .orderBy('window_start')
        .limit(limit)
        .execute();
      return rows.map(toAppointment);
    },
    async availableSlots(fromDate, toDate, limit, options = {}) {
      const { freeFor } = options;
      let query = db
        .selectFrom('crm_slots')
        .selectAll('crm_slots')
        .where('available', '=', 1)
        .where('date', '>=', fromDate)
        .where('date', '<=', toDate);
      // Windows (HH:MM, compared as text) overlapping one of the customer's scheduled appointments.
      if (freeFor)
        query = query.where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('crm_appointments as a')
                .select('a.id')
                .where('a.customer_id', '=', freeFor)
                .where('a.status', '=', 'scheduled')
                .whereRef('a.date', '=', 'crm_slots.date')
                .whereRef('a.window_start', '<', 'crm_slots.window_end')
                .whereRef('a.window_end', '>', 'crm_slots.window_start'),
            ),
          ),
        );
      const rows = await query.orderBy('date').orderBy('window_start').limit(limit).execute();
      return rows.map(toSlot);
    },
    cancelAppointment: (customerId, appointmentId) =>
      ctx.atomic(async ({ db: tx }) => {
        const row = await appointmentOf(customerId, appointmentId, tx);
        await tx.updateTable('crm_appointments').set({ status: 'cancelled' }).where('id', '=', row.id).execute();
        if (row.slot_id)
          await tx.updateTable('crm_slots').set({ available: 1 }).where('id', '=', row.slot_id).execute();
        return toAppointment({ ...row, status: 'cancelled' });
      }),
    rescheduleAppointment: (customerId, appointmentId, slotId) =>
      ctx.atomic(async ({ db: tx }) => {
        const row = await appointmentOf(customerId, appointmentId, tx);
        const slot = await takeSlot(tx, slotId);
        await refuseOverlap(tx, customerId, slot, row.id);
        if (row.slot_id)
          await tx.updateTable('crm_slots').set({ available: 1 }).where('id', '=', row.slot_id).execute();
        const moved = {
          ...row,
          date: slot.date,
          window_start: slot.window_start,
          window_end: slot.window_end,
          slot_id: slot.id,
        };
        await tx
          .updateTable('crm_appointments')
          .set({ date: moved.date, window_start: moved.window_start, window_end: moved.window_end, slot_id: slot.id })
          .where('id', '=', row.id)
          .execute();
        return toAppointment(moved);
      }),
    createAppointment: (customerId, slotId, notes) =>
      ctx.atomic(async ({ db: tx }) => {
        const customer = await tx
          .selectFrom('crm_customers')
          .selectAll()
          .where('id', '=', customerId)
          .executeTakeFirst();
        if (!customer) throw new CrmError('not_found', `customer ${customerId} does not exist`);
        const slot = await takeSlot(tx, slotId);
        await refuseOverlap(tx, customerId, slot);
        const row = {
          id: newId('apt'),
          customer_id: customerId,
          service: 'General service visit',
          date: slot.date,
          window_start: slot.window_start,
          window_end: slot.window_end,
          status: 'scheduled',
          address: customer.address,
          notes,
          slot_id: slot.id,
        };
        await tx.insertInto('crm_appointments').values(row).execute();
        return toAppointment(row);
      }),
    async openInvoices(customerId) {
      const rows = await db
        .selectFrom('crm_invoices')
        .selectAll()
        .where('customer_id', '=', customerId)
        .where('status', '=', 'open')
        .orderBy('due_date')
        .execute();
      return rows.map(toInvoice);
    },
    async createTicket({ customerId, reason, conversationId, phone, createdAt }) {
      const id = newId('tkt');
      await db
        .insertInto('crm_tickets')
        .values({
          id,
          customer_id: customerId,
          reason,
          conversation_id: conversationId,
          phone,
          created_at: createdAt.getTime(),
        })
        .execute();
      return { id };
    },
    async seedIfEmpty(today) {
      const any = await db.selectFrom('crm_customers').select('id').limit(1).executeTakeFirst();
      if (any) return false;
      // Several processes may start at once: whoever comes second inserts nothing.
      return ctx.atomic(async ({ db: tx }) => {
        const seed = demoSeed(today);
        const inserted = await tx
          .insertInto('crm_customers')
          .values(seed.customers)
          .onConflict((oc) => oc.column('id').doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
        await tx
          .insertInto('crm_slots')
          .values(seed.slots)
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        await tx
          .insertInto('crm_appointments')
          .values(seed.appointments)
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        await tx
          .insertInto('crm_invoices')
          .values(seed.invoices)
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return true;
      });
    },
  };
}

/** Demo data around `today`: two customers share a phone (the ZIP tells them apart). */
export function demoSeed(today: string) {
  const day = (offset: number) =>
    new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
  const customers = [
    {
      id: 'cus_alex',
      name: 'Alex Rivera',
      phone: '+14155550100',
      zip: '94107',
      address: '123 Market St, San Francisco, CA 94107',
    },
    {
      id: 'cus_jordan',
      name: 'Jordan Lee',
      phone: '+14155550100',
      zip: '94110',
      address: '77 Valencia St, San Francisco, CA 94110',
    },
    {
      id: 'cus_sam',
      name: 'Sam Patel',
      phone: '+12125550123',
      zip: '10001',
      address: '5 W 30th St, New York, NY 10001',
    },
  ];
  const slots = Array.from({ length: 21 }, (_, i) => i + 1).flatMap((offset) =>
    [
      ['09:00', '11:00'],
      ['13:00', '15:00'],
    ].map(([start, end]) => ({
      id: `slot_${day(offset).replaceAll('-', '')}_${start!.replace(':', '')}`,
      date: day(offset),
      window_start: start!,
      window_end: end!,
      available: 1,
    })),
  );
  const appointment = (
    id: string,
    customer: (typeof customers)[number],
    service: string,
    offset: number,
    start: string,
    end: string,
  ) => ({
    id,
    customer_id: customer.id,
    service,
    date: day(offset),
    window_start: start,
    window_end: end,
    status: 'scheduled',
    address: customer.address,
    notes: null,
    slot_id: null,
  });
  const [alex, jordan, sam] = customers as [
    (typeof customers)[number],
    (typeof customers)[number],
    (typeof customers)[number],
  ];
  const appointments = [
    appointment('apt_alex_1', alex, 'Quarterly pest control', 3, '09:00', '11:00'),
    appointment('apt_alex_2', alex, 'Termite inspection', 17, '13:00', '15:00'),
    appointment('apt_jordan_1', jordan, 'Rodent follow-up', 5, '10:00', '12:00'),
    appointment('apt_sam_1', sam, 'Ant treatment', 2, '08:00', '10:00'),
  ];
  const invoices = [
    { id: 'inv_alex_1', customer_id: alex.id, amount_cents: 12900, currency: 'USD', due_date: day(10), status: 'open' },
    {
      id: 'inv_alex_0',
      customer_id: alex.id,
      amount_cents: 12900,
      currency: 'USD',
      due_date: day(-80),
      status: 'paid',
    },
    { id: 'inv_sam_1', customer_id: sam.id, amount_cents: 8900, currency: 'USD', due_date: day(4), status: 'open' },
  ];
  return { customers, slots, appointments, invoices };
}

type Row<T extends keyof Database> = Selectable<Database[T]>;
const toCustomer = (row: Row<'crm_customers'>): Customer => ({
  id: row.id,
  name: row.name,
  phone: row.phone,
  zip: row.zip,
  address: row.address,
});
const toSlot = (row: Row<'crm_slots'>): Slot => ({
  id: row.id,
  date: row.date,
  windowStart: row.window_start,
  windowEnd: row.window_end,
});
const toInvoice = (row: Row<'crm_invoices'>): Invoice => ({
  id: row.id,
  customerId: row.customer_id,
  amountCents: Number(row.amount_cents),
  currency: row.currency,
  dueDate: row.due_date,
  status: row.status === 'paid' ? 'paid' : 'open',
});
function toAppointment(row: Row<'crm_appointments'>): Appointment {
  const status = row.status === 'cancelled' || row.status === 'completed' ? row.status : 'scheduled';
  return {
    id: row.id,
    customerId: row.customer_id,
    service: row.service,
    date: row.date,
    windowStart: row.window_start,
    windowEnd: row.window_end,
    status,
    address: row.address,
    notes: row.notes,
  };
}
