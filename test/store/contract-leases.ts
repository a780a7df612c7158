import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.ts';
import { at, inboxItem, participantWithConversation, timer } from './store-fixtures.ts';

/** Conversation leases and the per-conversation inbox (decision 004). */
export function leasesContract(store: () => Store): void {
  const setup = () => participantWithConversation(store());

  describe('conversation leases', () => {
    it('is taken when free or expired, renewed by its owner, refused to others, and released', async () => {
      const { c } = await setup();
      expect(await store().acquireLease(c.id, 'A', at(0), at(10_000))).toBe(true);
      expect(await store().acquireLease(c.id, 'B', at(5000), at(15_000))).toBe(false);
      expect(await store().acquireLease(c.id, 'A', at(6000), at(16_000))).toBe(true); // renewal
      expect(await store().acquireLease(c.id, 'B', at(15_999), at(25_000))).toBe(false);
      expect(await store().acquireLease(c.id, 'B', at(16_000), at(26_000))).toBe(true); // A's lease ran out
      await store().releaseLease(c.id, 'A'); // not A's any more: nothing happens
      expect(await store().acquireLease(c.id, 'A', at(17_000), at(27_000))).toBe(false);
      await store().releaseLease(c.id, 'B');
      expect(await store().acquireLease(c.id, 'A', at(17_000), at(27_000))).toBe(true);
      expect(await store().clearLeases()).toBe(1);
      expect(await store().acquireLease(c.id, 'B', at(17_000), at(27_000))).toBe(true);
    });

    it('goes to exactly one of many concurrent takers', async () => {
      const { c } = await setup();
      const owners = Array.from({ length: 12 }, (_, i) => `P${i}`);
      const won = await Promise.all(owners.map((owner) => store().acquireLease(c.id, owner, at(0), at(10_000))));
      expect(won.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('inbox per conversation', () => {
    it('lists a conversation\'s pending items in arrival order and completes each once', async () => {
      const { p, c } = await setup();
      const other = await setup();
      const items = [0, 1, 2].map((i) => inboxItem({ participantId: p.id, conversationId: c.id, receivedAt: at(1000 - i), text: `m${i}` }));
      for (const item of items) await store().insertInbox(item);
      await store().insertInbox(inboxItem({ participantId: other.p.id, conversationId: other.c.id }));
      expect((await store().listPendingInboxOf(c.id, 10)).map((item) => item.text)).toEqual(['m0', 'm1', 'm2']);
      expect((await store().listPendingInboxOf(c.id, 2)).map((item) => item.text)).toEqual(['m0', 'm1']);
      expect(await store().completeInbox(items[0]!.id, 'processed', at(2000))).toBe(true);
      expect(await store().completeInbox(items[0]!.id, 'failed', at(2001), 'late')).toBe(false);
      expect(await store().getInbox(items[0]!.id)).toMatchObject({ status: 'processed', processedAt: at(2000), error: null });
      expect((await store().listPendingInboxOf(c.id, 10)).map((item) => item.text)).toEqual(['m1', 'm2']);
    });
  });

  it('extends a running timer\'s lease only for the attempt that holds it', async () => {
    const { p, c } = await participantWithConversation(store());
    const t = timer(c.id, p.id, { dueAt: at(0) });
    await store().scheduleTimer(t);
    expect(await store().extendTimerLease(t.id, 1, at(9000))).toBe(false); // not claimed yet
    const [claimed] = await store().claimDueTimers(at(0), 1, at(5000));
    expect(await store().extendTimerLease(t.id, claimed!.attempts, at(9000))).toBe(true);
    expect(await store().claimDueTimers(at(8000), 1, at(20_000))).toEqual([]); // the extended lease holds
    const [retaken] = await store().claimDueTimers(at(9000), 1, at(20_000));
    expect(retaken!.attempts).toBe(2);
    expect(await store().extendTimerLease(t.id, 1, at(30_000))).toBe(false); // the first claim lost it
    await store().completeTimer(t.id, at(10_000));
    expect(await store().extendTimerLease(t.id, 2, at(30_000))).toBe(false);
  });

  it('tells the database clock', async () => {
    const now = await store().databaseNow();
    expect(Math.abs(now.getTime() - Date.now())).toBeLessThan(60_000);
  });
}
