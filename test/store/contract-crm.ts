import { describe, expect, it } from 'vitest';
import { CrmError } from '../../src/flows/service-desk/crm.ts';
import type { Store } from '../../src/store/store.ts';
import { crmOf } from '../kit/crm.ts';
import { demoCrmQueries } from '../../src/flows/service-desk/demo-crm-queries.ts';

const TODAY = '2026-06-01';

/** The demo CRM (decision 005): seed, lookups, and changes that only ever touch the caller's own records. */
export function crmContract(store: () => Store): void {
  describe('demo CRM', () => {
    const seeded = async () => {
      expect(await crmOf(store()).seedIfEmpty(TODAY)).toBe(true);
      expect(await crmOf(store()).seedIfEmpty(TODAY)).toBe(false);
      return crmOf(store());
    };

    it('finds every customer sharing a phone, and their upcoming appointments soonest first', async () => {
      const crm = await seeded();
      expect((await crm.findCustomersByPhone('+14155550100')).map((c) => [c.id, c.zip])).toEqual([
        ['cus_alex', '94107'],
        ['cus_jordan', '94110'],
      ]);
      expect(await crm.findCustomersByPhone('+19999999999')).toEqual([]);
      expect((await crm.upcomingAppointments('cus_alex', TODAY, 3)).map((a) => [a.id, a.date, a.windowStart])).toEqual([
        ['apt_alex_1', '2026-06-04', '09:00'],
        ['apt_alex_2', '2026-06-18', '13:00'],
      ]);
      expect(await crm.upcomingAppointments('cus_alex', TODAY, 1)).toHaveLength(1);
      expect((await crm.openInvoices('cus_alex')).map((i) => [i.id, i.amountCents])).toEqual([['inv_alex_1', 12900]]);
    });

    it('lists free slots in a date range, soonest first', async () => {
      const crm = await seeded();
      const slots = await crm.availableSlots('2026-06-02', '2026-06-03', 10);
      expect(slots.map((s) => `${s.date} ${s.windowStart}-${s.windowEnd}`)).toEqual([
        '2026-06-02 09:00-11:00',
        '2026-06-02 13:00-15:00',
        '2026-06-03 09:00-11:00',
        '2026-06-03 13:00-15:00',
      ]);
      expect(await crm.availableSlots('2026-06-02', '2026-06-15', 3)).toHaveLength(3);
    });

    it("cancels only the caller's own scheduled appointment, once", async () => {
      const crm = await seeded();
      await expect(crm.cancelAppointment('cus_alex', 'apt_jordan_1')).rejects.toMatchObject({ code: 'not_yours' });
      await expect(crm.cancelAppointment('cus_alex', 'apt_nope')).rejects.toBeInstanceOf(CrmError);
      expect(await crm.cancelAppointment('cus_alex', 'apt_alex_1')).toMatchObject({
        id: 'apt_alex_1',
        status: 'cancelled',
      });
      await expect(crm.cancelAppointment('cus_alex', 'apt_alex_1')).rejects.toMatchObject({ code: 'not_scheduled' });
      expect((await crm.upcomingAppointments('cus_alex', TODAY, 3)).map((a) => a.id)).toEqual(['apt_alex_2']);
      expect((await crm.upcomingAppointments('cus_jordan', TODAY, 3)).map((a) => a.id)).toEqual(['apt_jordan_1']);
    });

    it('reschedules into a free slot, then taken; books a new appointment at the address on file', async () => {
      const crm = await seeded();
      const [first, second] = await crm.availableSlots('2026-06-02', '2026-06-02', 2);
      expect(await crm.rescheduleAppointment('cus_alex', 'apt_alex_1', first!.id)).toMatchObject({
        date: '2026-06-02',
        windowStart: '09:00',
        status: 'scheduled',
      });
      await expect(crm.createAppointment('cus_sam', first!.id, null)).rejects.toMatchObject({ code: 'not_available' });
      const created = await crm.createAppointment('cus_sam', second!.id, 'Side door');
      expect(created).toMatchObject({
        customerId: 'cus_sam',
        date: '2026-06-02',
        windowStart: '13:00',
        address: '5 W 30th St, New York, NY 10001',
        notes: 'Side door',
      });
      expect(await crm.availableSlots('2026-06-02', '2026-06-02', 5)).toEqual([]);
      // Cancelling the moved appointment frees its slot again.
      await crm.cancelAppointment('cus_alex', 'apt_alex_1');
      expect((await crm.availableSlots('2026-06-02', '2026-06-02', 5)).map((s) => s.id)).toEqual([first!.id]);
    });

    it('gives one free slot to only one of two concurrent bookings', async () => {
      const crm = await seeded();
      const [slot] = await crm.availableSlots('2026-06-05', '2026-06-05', 1);
      const results = await Promise.allSettled([
        crm.createAppointment('cus_alex', slot!.id, null),
        crm.createAppointment('cus_sam', slot!.id, null),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    });

    it("keeps a flow's state per conversation, replaced on save", async () => {
      const { participantWithConversation, at } = await import('./store-fixtures.ts');
      const { c } = await participantWithConversation(store());
      expect(await store().getFlowState(c.id)).toBeUndefined();
      await store().saveFlowState(c.id, { state: 'VerifiedIdle', ids: ['a'] }, at(1));
      await store().saveFlowState(c.id, { state: 'Completed', ids: [] }, at(2));
      expect(await store().getFlowState(c.id)).toEqual({ state: 'Completed', ids: [] });
    });

    it('keeps who a web session is for: each field set on its own, the other kept', async () => {
      const { conversation, at } = await import('./store-fixtures.ts');
      const c = conversation(null);
      await store().insertConversation(c);
      expect(await store().getSessionCaller(c.id)).toBeUndefined();
      await store().saveSessionCaller(c.id, { phone: '+14155550100', person: 'id:crm-42' }, at(1));
      await store().saveSessionCaller(c.id, { phone: '+14155550199' }, at(2));
      expect(await store().getSessionCaller(c.id)).toEqual({ phone: '+14155550199', person: 'id:crm-42' });
      await store().transaction((tx) => tx.saveSessionCaller(c.id, { person: null }, at(3)));
      expect(await store().getSessionCaller(c.id)).toEqual({ phone: '+14155550199', person: null });
    });

    it('is seeded once when several processes start together', async () => {
      const results = await Promise.all(Array.from({ length: 4 }, () => crmOf(store()).seedIfEmpty(TODAY)));
      expect(results.filter(Boolean).length).toBeLessThanOrEqual(1);
      expect(await crmOf(store()).findCustomersByPhone('+14155550100')).toHaveLength(2);
    });

    it("as a store extension, commits with the engine's writes in one transaction, or not at all", async () => {
      const { participantWithConversation, at } = await import('./store-fixtures.ts');
      await seeded();
      const { c } = await participantWithConversation(store());
      const crm = store().extend(demoCrmQueries);
      const [appointment] = await crm.ops.upcomingAppointments('cus_alex', TODAY, 1);
      const failing = crm.transaction(async (tx, crmTx) => {
        await crmTx.cancelAppointment('cus_alex', appointment!.id);
        await tx.saveFlowState(c.id, { state: 'Cancelled' }, at(1));
        throw new Error('the turn failed after both writes');
      });
      await expect(failing).rejects.toThrow('the turn failed');
      expect(await crm.ops.upcomingAppointments('cus_alex', TODAY, 5)).toContainEqual(
        expect.objectContaining({ id: appointment!.id }),
      );
      expect(await store().getFlowState(c.id)).toBeUndefined();
      await crm.transaction(async (tx, crmTx) => {
        await crmTx.cancelAppointment('cus_alex', appointment!.id);
        await tx.saveFlowState(c.id, { state: 'Cancelled' }, at(1));
      });
      expect(await crm.ops.upcomingAppointments('cus_alex', TODAY, 5)).not.toContainEqual(
        expect.objectContaining({ id: appointment!.id }),
      );
      expect(await store().getFlowState(c.id)).toEqual({ state: 'Cancelled' });
    });

    it('opens escalation tickets with the conversation, the number to call back and the given time', async () => {
      const crm = await seeded();
      const createdAt = new Date('2026-06-01T17:00:00Z');
      const ticket = await crm.createTicket({
        customerId: null,
        reason: 'wrong ZIP three times',
        conversationId: 'conv_1',
        phone: '+14155550199',
        createdAt,
      });
      expect(ticket.id).toMatch(/^tkt_/);
      const stored = await store()
        .extend((ctx) => ({ ticket: () => ctx.db.selectFrom('crm_tickets').selectAll().execute() }))
        .ops.ticket();
      expect(stored).toEqual([
        {
          id: ticket.id,
          customer_id: null,
          reason: 'wrong ZIP three times',
          conversation_id: 'conv_1',
          phone: '+14155550199',
          created_at: createdAt.getTime(),
        },
      ]);
    });

    it("leaves out windows overlapping the customer's scheduled appointments, and refuses to book them", async () => {
      const crm = await seeded();
      // Alex's quarterly visit is on June 4, 9:00-11:00.
      const all = await crm.availableSlots('2026-06-04', '2026-06-04', 5);
      expect(all.map((s) => s.windowStart)).toEqual(['09:00', '13:00']);
      const free = await crm.availableSlots('2026-06-04', '2026-06-04', 5, { freeFor: 'cus_alex' });
      expect(free.map((s) => s.windowStart)).toEqual(['13:00']);
      expect((await crm.availableSlots('2026-06-04', '2026-06-04', 5, { freeFor: 'cus_sam' })).length).toBe(2);
      await expect(crm.createAppointment('cus_alex', all[0]!.id, null)).rejects.toMatchObject({ code: 'overlaps' });
      await expect(crm.rescheduleAppointment('cus_alex', 'apt_alex_2', all[0]!.id)).rejects.toMatchObject({
        code: 'overlaps',
      });
      // Refused, the window stays free; moving the visit within its own window's day is no overlap with itself.
      expect((await crm.availableSlots('2026-06-04', '2026-06-04', 5)).length).toBe(2);
      expect(await crm.rescheduleAppointment('cus_alex', 'apt_alex_1', all[1]!.id)).toMatchObject({
        windowStart: '13:00',
      });
    });
  });
}
