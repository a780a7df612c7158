import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.ts';
import { at, inboxItem, outboxItem, participantWithConversation, timer } from './store-fixtures.ts';

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

    it("is renewed only while the row is still its owner's, even past its end", async () => {
      const { c } = await setup();
      expect(await store().renewLease(c.id, 'A', at(10_000))).toBe(false); // never taken
      expect(await store().acquireLease(c.id, 'A', at(0), at(10_000))).toBe(true);
      expect(await store().renewLease(c.id, 'A', at(20_000))).toBe(true);
      expect(await store().acquireLease(c.id, 'B', at(15_000), at(25_000))).toBe(false); // renewed: still A's
      expect(await store().renewLease(c.id, 'B', at(30_000))).toBe(false);
      expect(await store().acquireLease(c.id, 'B', at(20_000), at(30_000))).toBe(true); // lapsed: B takes it
      expect(await store().renewLease(c.id, 'A', at(40_000))).toBe(false);
      await store().releaseLease(c.id, 'B');
      expect(await store().renewLease(c.id, 'A', at(40_000))).toBe(false); // let go by B meanwhile: not A's
    });

    it('goes to exactly one of many concurrent takers', async () => {
      const { c } = await setup();
      const owners = Array.from({ length: 12 }, (_, i) => `P${i}`);
      const won = await Promise.all(owners.map((owner) => store().acquireLease(c.id, owner, at(0), at(10_000))));
      expect(won.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('virtual clock', () => {
    it('keeps the last virtual time, never moving it back', async () => {
      expect(await store().getVirtualClock()).toBeUndefined();
      await store().saveVirtualClock(at(5000));
      expect(await store().getVirtualClock()).toEqual(at(5000));
      await store().saveVirtualClock(at(9000));
      await store().saveVirtualClock(at(7000)); // a late write from an earlier move
      expect(await store().getVirtualClock()).toEqual(at(9000));
    });
  });

  describe('inbox per conversation', () => {
    it("lists a conversation's pending items in arrival order and completes each once", async () => {
      const { p, c } = await setup();
      const other = await setup();
      const items = [0, 1, 2].map((i) =>
        inboxItem({ participantId: p.id, conversationId: c.id, receivedAt: at(1000 - i), text: `m${i}` }),
      );
      for (const item of items) await store().insertInbox(item);
      await store().insertInbox(inboxItem({ participantId: other.p.id, conversationId: other.c.id }));
      expect((await store().listPendingInboxOf(c.id, 10)).map((item) => item.text)).toEqual(['m0', 'm1', 'm2']);
      expect((await store().listPendingInboxOf(c.id, 2)).map((item) => item.text)).toEqual(['m0', 'm1']);
      expect(await store().completeInbox(items[0]!.id, 'processed', at(2000))).toBe(true);
      expect(await store().completeInbox(items[0]!.id, 'failed', at(2001), 'late')).toBe(false);
      expect(await store().getInbox(items[0]!.id)).toMatchObject({
        status: 'processed',
        processedAt: at(2000),
        error: null,
      });
      expect((await store().listPendingInboxOf(c.id, 10)).map((item) => item.text)).toEqual(['m1', 'm2']);
    });
  });

  it("extends a running timer's lease only for the attempt that holds it", async () => {
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

  it('claims due outbox items one per conversation, oldest first, hidden until the claim lapses', async () => {
    const one = await participantWithConversation(store());
    const two = await participantWithConversation(store());
    const items = [
      outboxItem(one.c.id, { nextAttemptAt: at(0), createdAt: at(0), text: '1a' }),
      outboxItem(one.c.id, { nextAttemptAt: at(0), createdAt: at(0), text: '1b' }),
      outboxItem(two.c.id, { nextAttemptAt: at(0), createdAt: at(0), text: '2a' }),
      outboxItem(two.c.id, { nextAttemptAt: at(50_000), createdAt: at(0), text: '2-later' }),
    ];
    await store().enqueueOutbox(items);
    const texts = (list: Array<{ text: string }>) => list.map((item) => item.text).sort();
    expect(texts(await store().claimDueOutbox(at(1000), 10, at(31_000)))).toEqual(['1a', '2a']);
    expect(await store().claimDueOutbox(at(2000), 10, at(32_000))).toEqual([]); // claimed, and 1b waits for 1a
    await store().markOutboxSent(items[0]!.id, at(3000), 1);
    expect(texts(await store().claimDueOutbox(at(3000), 10, at(33_000)))).toEqual(['1b']);
    // Its sender died: due again.
    expect(texts(await store().claimDueOutbox(at(31_000), 10, at(61_000)))).toEqual(['2a']);
    await store().markOutboxSent(items[1]!.id, at(4000), 1);
    await store().markOutboxAttemptFailed(items[2]!.id, { attempts: 1, error: 'x', nextAttemptAt: null });
    expect(texts(await store().claimDueOutbox(at(51_000), 10, at(81_000)))).toEqual(['2-later']);
  });

  it('never gives one outbox item to two concurrent claimers', async () => {
    const claimed: string[] = [];
    for (let i = 0; i < 10; i++) {
      const { c } = await participantWithConversation(store());
      await store().enqueueOutbox([outboxItem(c.id, { nextAttemptAt: at(0) })]);
    }
    const rounds = await Promise.all(Array.from({ length: 6 }, () => store().claimDueOutbox(at(1000), 3, at(31_000))));
    for (const round of rounds) claimed.push(...round.map((item) => item.id));
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed).toHaveLength(10);
  });

  it('tells the database clock', async () => {
    const now = await store().databaseNow();
    expect(Math.abs(now.getTime() - Date.now())).toBeLessThan(60_000);
  });
}
