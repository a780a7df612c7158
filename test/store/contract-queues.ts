import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.ts';
import { at, inboxItem, outboxItem, participantWithConversation, T0, timer, toolCall, turn } from './store-fixtures.ts';

/** Timers, inbox, outbox, turns and tool calls: the queue-like parts of the store. */
export function queuesContract(store: () => Store): void {
  const setup = () => participantWithConversation(store());

  describe('timers', () => {
    it('schedules, replaces a pending timer with the same key, and cancels', async () => {
      const { p, c } = await setup();
      const first = timer(c.id, p.id, { dedupKey: 'reminder:1', dueAt: at(5000) });
      await store().scheduleTimer(first);
      expect(await store().getTimer(first.id)).toEqual({
        ...first,
        status: 'pending',
        attempts: 0,
        leaseUntil: null,
        lastError: null,
      });
      const second = timer(c.id, p.id, { dedupKey: 'reminder:1', dueAt: at(9000), payload: null });
      await store().scheduleTimer(second);
      expect((await store().getTimer(first.id))!.status).toBe('cancelled');
      expect(await store().listPendingTimers(p.id)).toEqual([
        { ...second, status: 'pending', attempts: 0, leaseUntil: null, lastError: null },
      ]);

      expect(await store().cancelTimer('reminder:1', at(1))).toBe(true);
      expect(await store().cancelTimer('reminder:1', at(2))).toBe(false);
      expect((await store().getTimer(second.id))!.status).toBe('cancelled');
      expect(await store().listPendingTimers(p.id)).toEqual([]);
      expect(await store().getTimer('nothing')).toBeUndefined();
    });

    it('keeps one pending timer per key under concurrent replacement', async () => {
      const { p, c } = await setup();
      await Promise.all(
        Array.from({ length: 10 }, (_, i) => store().scheduleTimer(timer(c.id, p.id, { dedupKey: 'k', dueAt: at(i) }))),
      );
      expect(await store().listPendingTimers(p.id)).toHaveLength(1);
    });

    it('claims due timers oldest first, leases them, and re-claims expired leases', async () => {
      const { p, c } = await setup();
      const late = timer(c.id, p.id, { dueAt: at(3000) });
      const early = timer(c.id, p.id, { dueAt: at(1000) });
      const future = timer(c.id, p.id, { dueAt: at(60_000) });
      for (const t of [late, early, future]) await store().scheduleTimer(t);
      expect(await store().listPendingTimers(p.id)).toEqual(
        [early, late, future].map((t) => expect.objectContaining({ id: t.id })),
      );
      expect(await store().nextTimerDue()).toEqual(at(1000));

      const claimed = await store().claimDueTimers(at(5000), 10, at(35_000));
      expect(claimed.map((t) => t.id)).toEqual([early.id, late.id]);
      for (const t of claimed) expect(t).toMatchObject({ status: 'running', attempts: 1, leaseUntil: at(35_000) });
      expect(await store().claimDueTimers(at(5000), 10, at(35_000))).toEqual([]);
      // The earliest of a pending due time and a lease expiry.
      expect(await store().nextTimerDue()).toEqual(at(35_000));

      await store().completeTimer(early.id, at(6000));
      expect(await store().getTimer(early.id)).toMatchObject({ status: 'done', leaseUntil: null });
      // The lease of `late` expires: another worker may run it again.
      const again = await store().claimDueTimers(at(40_000), 10, at(70_000));
      expect(again.map((t) => [t.id, t.attempts])).toEqual([[late.id, 2]]);
      expect(await store().claimDueTimers(at(40_000), 0, at(70_000))).toEqual([]);
      expect((await store().claimDueTimers(at(60_000), 1, at(90_000))).map((t) => t.id)).toEqual([future.id]);
    });

    it('never gives one timer to two concurrent claimers', async () => {
      const { p, c } = await setup();
      for (let i = 0; i < 30; i++) await store().scheduleTimer(timer(c.id, p.id, { dueAt: at(i) }));
      const batches = await Promise.all(
        Array.from({ length: 6 }, () => store().claimDueTimers(at(100), 10, at(60_000))),
      );
      const ids = batches.flat().map((t) => t.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeLessThanOrEqual(30);
      const rest = await store().claimDueTimers(at(100), 100, at(60_000));
      expect(ids.length + rest.length).toBe(30);
    });

    it('retries or fails a timer, and a running one never blocks its key', async () => {
      const { p, c } = await setup();
      const t = timer(c.id, p.id, { dedupKey: 'daily:1', dueAt: at(0) });
      await store().scheduleTimer(t);
      await store().claimDueTimers(at(0), 5, at(60_000));
      await store().failTimer(t.id, 'model down', at(10_000));
      expect(await store().getTimer(t.id)).toMatchObject({
        status: 'pending',
        dueAt: at(10_000),
        lastError: 'model down',
        leaseUntil: null,
        attempts: 1,
      });
      expect(await store().nextTimerDue()).toEqual(at(10_000));

      await store().claimDueTimers(at(10_000), 5, at(70_000));
      // While it runs, the next one with the same key can be armed.
      const next = timer(c.id, p.id, { dedupKey: 'daily:1', dueAt: at(86_400_000) });
      await store().scheduleTimer(next);
      expect((await store().getTimer(t.id))!.status).toBe('running');
      // A retry would make two pending timers with one key: the newer one wins.
      await store().failTimer(t.id, 'again', at(20_000));
      expect(await store().getTimer(t.id)).toMatchObject({ status: 'cancelled', lastError: 'again', attempts: 2 });
      expect((await store().listPendingTimers(p.id)).map((x) => x.id)).toEqual([next.id]);

      const last = timer(c.id, p.id, { dueAt: at(0) });
      await store().scheduleTimer(last);
      await store().claimDueTimers(at(0), 5, at(60_000));
      await store().failTimer(last.id, 'gave up', null);
      expect(await store().getTimer(last.id)).toMatchObject({
        status: 'failed',
        lastError: 'gave up',
        leaseUntil: null,
      });
    });

    it('cancels the pending timers of several keys in one call, and only those', async () => {
      const { p, c } = await setup();
      for (const dedupKey of ['a:1', 'b:1', 'c:1']) await store().scheduleTimer(timer(c.id, p.id, { dedupKey }));
      expect(await store().cancelTimers([], at(1))).toBe(0);
      expect(await store().cancelTimers(['a:1', 'c:1', 'missing'], at(1))).toBe(2);
      expect((await store().listPendingTimers(p.id)).map((t) => t.dedupKey)).toEqual(['b:1']);
      expect(await store().cancelTimers(['a:1', 'b:1'], at(2))).toBe(1);
      expect(await store().listPendingTimers(p.id)).toEqual([]);
    });

    it('cancels every pending timer of a participant', async () => {
      const { p, c } = await setup();
      const other = await setup();
      await store().scheduleTimer(timer(c.id, p.id));
      await store().scheduleTimer(timer(c.id, p.id));
      const running = timer(c.id, p.id, { dueAt: at(0) });
      await store().scheduleTimer(running);
      await store().claimDueTimers(at(0), 1, at(60_000));
      await store().scheduleTimer(timer(other.c.id, other.p.id));
      expect(await store().cancelTimersOf(p.id, at(1))).toBe(2);
      expect(await store().cancelTimersOf(p.id, at(2))).toBe(0);
      expect(await store().listPendingTimers(p.id)).toEqual([]);
      expect(await store().listPendingTimers(other.p.id)).toHaveLength(1);
      expect((await store().getTimer(running.id))!.status).toBe('running');
      expect(await store().nextTimerDue()).toEqual(at(60_000));
    });

    it('has no next due time when nothing is pending or running', async () => {
      expect(await store().nextTimerDue()).toBeNull();
    });
  });

  describe('backlog', () => {
    it('counts what waits (pending inbox and outbox, timers past due) and dates the oldest of each', async () => {
      const { p, c } = await setup();
      expect(await store().backlog(at(10_000))).toEqual({
        inboxPending: 0,
        oldestInboxAt: null,
        outboxPending: 0,
        oldestOutboxAt: null,
        timersOverdue: 0,
        oldestOverdueTimerAt: null,
      });
      await store().insertInbox(inboxItem({ receivedAt: at(1000) }));
      await store().insertInbox(inboxItem({ receivedAt: at(3000) }));
      await store().enqueueOutbox([outboxItem(c.id, { createdAt: at(2000) })]);
      await store().scheduleTimer(timer(c.id, p.id, { dedupKey: 'overdue:1', dueAt: at(4000) }));
      await store().scheduleTimer(timer(c.id, p.id, { dedupKey: 'future:1', dueAt: at(20_000) }));
      expect(await store().backlog(at(10_000))).toEqual({
        inboxPending: 2,
        oldestInboxAt: at(1000),
        outboxPending: 1,
        oldestOutboxAt: at(2000),
        timersOverdue: 1,
        oldestOverdueTimerAt: at(4000),
      });
    });
  });

  describe('inbox', () => {
    it('records once per channel message id and returns the earlier item for duplicates', async () => {
      const { p, c } = await setup();
      const item = inboxItem({
        channelMessageId: 'wamid.1',
        participantId: p.id,
        conversationId: c.id,
        traceParent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      });
      expect(await store().insertInbox(item)).toEqual({ item, duplicate: false, behind: false });
      expect(await store().getInbox(item.id)).toEqual(item);
      const again = inboxItem({ channelMessageId: 'wamid.1', text: 'resent' });
      expect(await store().insertInbox(again)).toEqual({ item, duplicate: true });
      expect(await store().getInbox(again.id)).toBeUndefined();
      // Another channel, or no channel id at all, never collides.
      expect((await store().insertInbox(inboxItem({ channel: 'twilio', channelMessageId: 'wamid.1' }))).duplicate).toBe(
        false,
      );
      expect((await store().insertInbox(inboxItem({ channelMessageId: null }))).duplicate).toBe(false);
      expect((await store().insertInbox(inboxItem({ channelMessageId: null }))).duplicate).toBe(false);
      expect(await store().listPendingInbox()).toHaveLength(4);
      // A second pending item of the conversation arrives behind the first; once that one is done, nothing is ahead.
      const next = inboxItem({ participantId: p.id, conversationId: c.id });
      expect(await store().insertInbox(next)).toMatchObject({ duplicate: false, behind: true });
      await store().completeInbox(item.id, 'processed', at(1));
      await store().completeInbox(next.id, 'processed', at(2));
      expect(await store().insertInbox(inboxItem({ participantId: p.id, conversationId: c.id }))).toMatchObject({
        behind: false,
      });
    });

    it('dedupes message ids per sender: another sender may use the same id', async () => {
      const fromA = inboxItem({ channel: 'http', sender: '+14165550101', channelMessageId: 'm1', text: 'from A' });
      const fromB = inboxItem({ channel: 'http', sender: '+14165550102', channelMessageId: 'm1', text: 'from B' });
      expect(await store().insertInbox(fromA)).toMatchObject({ item: fromA, duplicate: false });
      expect(await store().insertInbox(fromB)).toMatchObject({ item: fromB, duplicate: false });
      // A's redelivery is still A's duplicate, and answers with A's item, not B's.
      expect(await store().insertInbox({ ...fromA, id: 'in_again_a' })).toEqual({ item: fromA, duplicate: true });
      expect(await store().insertInbox({ ...fromB, id: 'in_again_b', text: 'changed' })).toEqual({
        item: fromB,
        duplicate: true,
      });
      expect((await store().listPendingInbox()).map((item) => item.id).sort()).toEqual([fromA.id, fromB.id].sort());
    });

    it('dedupes concurrent duplicates: exactly one is new', async () => {
      const items = Array.from({ length: 10 }, () => inboxItem({ channelMessageId: 'same' }));
      const results = await Promise.all(items.map((item) => store().insertInbox(item)));
      expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
      const winner = results.find((r) => !r.duplicate)!.item.id;
      for (const r of results) expect(r.item.id).toBe(winner);
      expect(await store().listPendingInbox()).toHaveLength(1);
    });

    it('lists pending items in arrival order and records status changes', async () => {
      const second = inboxItem({ receivedAt: at(2000) });
      const firstA = inboxItem({ receivedAt: at(1000) });
      const firstB = inboxItem({ receivedAt: at(1000) });
      for (const item of [second, firstA, firstB]) await store().insertInbox(item);
      const ids = async (limit?: number) => (await store().listPendingInbox(limit)).map((i) => i.id);
      expect(await ids()).toEqual([firstA.id, firstB.id, second.id]);
      expect(await ids(2)).toEqual([firstA.id, firstB.id]);

      await store().setInboxStatus(firstA.id, 'processed', at(3000));
      await store().setInboxStatus(firstB.id, 'failed', at(3100), 'model down');
      expect(await ids()).toEqual([second.id]);
      expect(await store().getInbox(firstA.id)).toMatchObject({
        status: 'processed',
        processedAt: at(3000),
        error: null,
      });
      expect(await store().getInbox(firstB.id)).toMatchObject({
        status: 'failed',
        processedAt: at(3100),
        error: 'model down',
      });
    });

    it("finds a sender's first message on a channel since a time", async () => {
      const old = inboxItem({ sender: '+14165550111', receivedAt: at(1000) });
      const firstA = inboxItem({ sender: '+14165550111', receivedAt: at(5000) });
      const firstB = inboxItem({ sender: '+14165550111', receivedAt: at(5000) });
      const other = inboxItem({ sender: '+14165550112', receivedAt: at(4000) });
      const elsewhere = inboxItem({ sender: '+14165550111', channel: 'twilio', receivedAt: at(3000) });
      for (const item of [firstB, old, other, elsewhere, firstA]) await store().insertInbox(item);
      expect((await store().firstInboxFrom('webhook', '+14165550111', at(0)))?.id).toBe(old.id);
      // Same time: arrival order.
      expect((await store().firstInboxFrom('webhook', '+14165550111', at(2000)))?.id).toBe(firstB.id);
      expect((await store().firstInboxFrom('twilio', '+14165550111', at(0)))?.id).toBe(elsewhere.id);
      expect(await store().firstInboxFrom('webhook', '+14165550111', at(6000))).toBeUndefined();
    });
  });

  describe('batched writes', () => {
    it('are committed when they resolve, gathered with a transaction under way or on their own', async () => {
      const { c } = await setup();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const first = outboxItem(c.id);
      const running = store().transaction(async (tx) => {
        await tx.enqueueOutbox([first]);
        await gate;
      });
      const gathered = outboxItem(c.id);
      const batched = store().batched((ops) => ops.enqueueOutbox([gathered]), { gather: true });
      release();
      await Promise.all([running, batched]);
      const alone = outboxItem(c.id);
      await store().batched((ops) => ops.enqueueOutbox([alone]));
      expect((await store().listOutbox(c.id)).map((o) => o.id)).toEqual([first.id, gathered.id, alone.id]);
      // A duplicate id.
      await expect(store().batched((ops) => ops.enqueueOutbox([alone]), { gather: true })).rejects.toThrow();
      expect(await store().listOutbox(c.id)).toHaveLength(3);
    });
  });

  describe('outbox', () => {
    it('tells whether a conversation has a row not yet sent, and releases claimed rows to the claim', async () => {
      const { c } = await setup();
      const other = await setup();
      expect(await store().hasPendingOutbox(c.id)).toBe(false);
      const claimed = outboxItem(c.id, { nextAttemptAt: at(60_000) });
      const sent = outboxItem(c.id, { nextAttemptAt: at(0) });
      await store().enqueueOutbox([claimed, sent, outboxItem(other.c.id)]);
      await store().markOutboxSent(sent.id, at(1), 1, null);
      expect(await store().hasPendingOutbox(c.id)).toBe(true);
      expect((await store().listDueOutbox(at(5000), 10)).map((o) => o.id)).not.toContain(claimed.id);
      await store().releaseOutbox([claimed.id, sent.id], at(5000));
      expect((await store().listDueOutbox(at(5000), 10)).map((o) => o.id)).toContain(claimed.id);
      // Sent rows stay as they are.
      expect(await store().getOutbox(sent.id)).toMatchObject({ status: 'sent', nextAttemptAt: at(0) });
      await store().markOutboxSent(claimed.id, at(6000), 1, null);
      expect(await store().hasPendingOutbox(c.id)).toBe(false);
    });

    it('writes rows claimed until a time unless the conversation has a row waiting, and says which', async () => {
      const { c } = await setup();
      const first = [outboxItem(c.id, { nextAttemptAt: at(0) }), outboxItem(c.id, { nextAttemptAt: at(0) })];
      // The second row is no "row waiting".
      expect(await store().enqueueOutbox(first, { claimUntil: at(30_000) })).toBe(true);
      expect((await store().listOutbox(c.id)).map((o) => o.nextAttemptAt)).toEqual([at(30_000), at(30_000)]);
      const behind = outboxItem(c.id, { nextAttemptAt: at(1000) });
      expect(await store().enqueueOutbox([behind], { claimUntil: at(31_000) })).toBe(false);
      expect(await store().getOutbox(behind.id)).toMatchObject({ status: 'pending', nextAttemptAt: at(1000) });
      expect(await store().enqueueOutbox([])).toBe(false);
      const other = await setup();
      await expect(
        store().enqueueOutbox([outboxItem(c.id), outboxItem(other.c.id)], { claimUntil: at(1) }),
      ).rejects.toThrow(/one conversation/);
    });

    it('marks several sends at once, or one alone, each with its time and attempts, provider ids kept', async () => {
      const { c } = await setup();
      const [a, b, w] = [outboxItem(c.id), outboxItem(c.id), outboxItem(c.id, { channel: 'whatsapp' })];
      const untouched = outboxItem(c.id);
      await store().enqueueOutbox([a, b, w, untouched]);
      await store().markOutboxSentMany([
        { id: a.id, at: at(100), attempts: 1, providerMessageId: null },
        { id: b.id, at: at(200), attempts: 3, providerMessageId: null },
        { id: w.id, at: at(300), attempts: 1, providerMessageId: 'wamid.MANY' },
      ]);
      expect(await store().getOutbox(a.id)).toMatchObject({ status: 'sent', sentAt: at(100), attempts: 1 });
      expect(await store().getOutbox(b.id)).toMatchObject({ status: 'sent', sentAt: at(200), attempts: 3 });
      expect(await store().getOutbox(w.id)).toMatchObject({ status: 'sent', providerMessageId: 'wamid.MANY' });
      expect(await store().getOutbox(untouched.id)).toMatchObject({ status: 'pending', sentAt: null });
      // One mark alone (the common case: the earlier reply's, riding in a turn's commit).
      await store().markOutboxSentMany([{ id: untouched.id, at: at(400), attempts: 2, providerMessageId: null }]);
      expect(await store().getOutbox(untouched.id)).toMatchObject({ status: 'sent', sentAt: at(400), attempts: 2 });
      expect(await store().getOutbox(a.id)).toMatchObject({ sentAt: at(100), attempts: 1 });
      await store().markOutboxSentMany([]);
    });

    it('delivers due items oldest first, then retries and gives up', async () => {
      const { p, c } = await setup();
      const poll = { question: 'How hard?', options: ['low', 'normal', 'high'] };
      const later = outboxItem(c.id, { nextAttemptAt: at(2000), createdAt: at(2000) });
      const earlier = outboxItem(c.id, {
        participantId: p.id,
        kind: 'poll',
        poll,
        nextAttemptAt: at(1000),
        createdAt: at(1000),
      });
      const future = outboxItem(c.id, { nextAttemptAt: at(90_000) });
      await store().enqueueOutbox([later, earlier, future]);
      await store().enqueueOutbox([]);
      expect(await store().getOutbox(earlier.id)).toEqual({
        ...earlier,
        status: 'pending',
        attempts: 0,
        lastError: null,
        sentAt: null,
        providerMessageId: null,
        deliveryStatus: null,
        deliveryStatusAt: null,
        deliveryError: null,
      });
      const due = async (now: Date, limit = 10) => (await store().listDueOutbox(now, limit)).map((o) => o.id);
      expect(await due(at(5000))).toEqual([earlier.id, later.id]);
      expect(await due(at(5000), 1)).toEqual([earlier.id]);

      await store().markOutboxAttemptFailed(earlier.id, { attempts: 1, error: 'timeout', nextAttemptAt: at(10_000) });
      expect(await store().getOutbox(earlier.id)).toMatchObject({
        status: 'pending',
        attempts: 1,
        lastError: 'timeout',
        nextAttemptAt: at(10_000),
      });
      expect(await due(at(5000))).toEqual([later.id]);
      expect(await due(at(10_000))).toEqual([later.id, earlier.id]);

      await store().markOutboxAttemptFailed(earlier.id, { attempts: 2, error: 'rejected', nextAttemptAt: null });
      expect(await store().getOutbox(earlier.id)).toMatchObject({
        status: 'failed',
        attempts: 2,
        lastError: 'rejected',
      });
      await store().markOutboxSent(later.id, at(11_000), 1);
      expect(await store().getOutbox(later.id)).toMatchObject({ status: 'sent', attempts: 1, sentAt: at(11_000) });
      expect(await due(at(100_000))).toEqual([future.id]);
      expect((await store().listOutbox(c.id)).map((o) => o.id)).toEqual([later.id, earlier.id, future.id]);
      expect(await store().listOutbox('nobody')).toEqual([]);
    });

    it('rejects a reused idempotency key', async () => {
      const { c } = await setup();
      const item = outboxItem(c.id);
      await store().enqueueOutbox([item]);
      await expect(
        store().enqueueOutbox([outboxItem(c.id, { idempotencyKey: item.idempotencyKey })]),
      ).rejects.toThrow();
      expect(await store().listOutbox(c.id)).toHaveLength(1);
    });
  });

  describe('turns and tool calls', () => {
    it('lists the last turns oldest first', async () => {
      const { c } = await setup();
      const turns = [
        turn(c.id, {
          startedAt: at(3000),
          status: 'failed',
          error: 'boom',
          inboxId: 'in_1',
          traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        }),
        turn(c.id, { startedAt: at(1000), firstTokenMs: 41, timeToStatusMs: 400 }),
        turn(c.id, { startedAt: at(2000), modelMs: 12.6, status: 'cancelled' }),
      ];
      for (const t of turns) await store().insertTurn(t);
      const listed = await store().listTurns(c.id);
      expect(listed.map((t) => t.id)).toEqual([turns[1]!.id, turns[2]!.id, turns[0]!.id]);
      expect(listed[2]).toEqual(turns[0]);
      expect(listed[0]).toEqual(turns[1]);
      expect(listed[1]!.status).toBe('cancelled');
      expect(listed[1]!.modelMs).toBe(13);
      expect((await store().listTurns(c.id, { limit: 2 })).map((t) => t.id)).toEqual([turns[2]!.id, turns[0]!.id]);
    });

    it('lists tool calls in execution order, optionally of one turn', async () => {
      const { c } = await setup();
      const [t1, t2] = [turn(c.id), turn(c.id, { startedAt: at(5000) })];
      // Ids chosen so that sorting by id would give a different order.
      const calls = [
        toolCall(c.id, t1.id, { id: 'zz', round: 1 }),
        toolCall(c.id, t1.id, { id: 'aa', round: 1, status: 'error', result: 'bad arguments' }),
        toolCall(c.id, t1.id, { id: 'mm', round: 2, createdAt: T0 }),
      ];
      await store().insertToolCalls(calls);
      await store().insertToolCalls([]);
      const other = toolCall(c.id, t2.id, { id: 'bb', createdAt: at(5000) });
      await store().insertToolCalls([other]);
      await store().insertTurn(t1);
      await store().insertTurn(t2);
      expect(await store().listToolCalls(c.id)).toEqual([...calls, other]);
      expect((await store().listToolCalls(c.id, { turnIds: [t2.id] })).map((x) => x.id)).toEqual(['bb']);
      expect(await store().listToolCalls('nobody')).toEqual([]);
    });

    it('writes a turn with its tool calls in one call, inside a transaction, undone with it', async () => {
      const { c } = await setup();
      const t = turn(c.id, { attempts: 2, error: null });
      const calls = [
        toolCall(c.id, t.id, { id: 'c2', round: 1 }),
        toolCall(c.id, t.id, { id: 'c1', round: 2, status: 'error', result: 'bad arguments' }),
      ];
      await store().transaction((tx) => tx.insertTurn(t, calls));
      expect(await store().listTurns(c.id)).toEqual([t]);
      expect(await store().listToolCalls(c.id, { turnIds: [t.id] })).toEqual(calls);

      const undone = turn(c.id);
      await expect(
        store().transaction(async (tx) => {
          await tx.insertTurn(undone, [toolCall(c.id, undone.id, { id: 'c3' })]);
          throw new Error('undo');
        }),
      ).rejects.toThrow('undo');
      expect((await store().listTurns(c.id)).map((x) => x.id)).toEqual([t.id]);
      expect(await store().listToolCalls(c.id, { turnIds: [undone.id] })).toEqual([]);
      // Turns are found by id alone: one of another conversation is not this one's.
      const { c: elsewhere } = await setup();
      const foreign = turn(elsewhere.id);
      await store().insertTurn(foreign, [toolCall(elsewhere.id, foreign.id, { id: 'c4' })]);
      expect(await store().listToolCalls(c.id, { turnIds: [foreign.id, t.id] })).toEqual(calls);
    });

    it("lists a turn's calls with calls committed before its record, in execution order", async () => {
      const { c } = await setup();
      const [early, late] = [turn(c.id), turn(c.id, { startedAt: at(5000) })];
      // The desk commits a confirmed change's call before its turn's record, at the same instant.
      const committedFirst = toolCall(c.id, early.id, { id: 'desk', round: 1 });
      await store().insertToolCalls([committedFirst]);
      const earlyCalls = [
        toolCall(c.id, early.id, { id: 'e2', round: 1 }),
        toolCall(c.id, early.id, { id: 'e1', round: 2, createdAt: at(10) }),
      ];
      const lateCalls = [toolCall(c.id, late.id, { id: 'l1', round: 1, createdAt: at(5000) })];
      // The later turn's record first: the order is execution's, not the records'.
      await store().insertTurn(late, lateCalls);
      await store().insertTurn(early, earlyCalls);
      await store().insertTurn(turn(c.id, { startedAt: at(6000) }));

      expect(await store().listToolCalls(c.id)).toEqual([committedFirst, ...earlyCalls, ...lateCalls]);
      expect(await store().listToolCalls(c.id, { turnIds: [early.id] })).toEqual([committedFirst, ...earlyCalls]);
      expect(await store().listToolCalls(c.id, { turnIds: [late.id] })).toEqual(lateCalls);
      expect(await store().listToolCalls(c.id, { turnIds: [late.id, early.id] })).toEqual([
        committedFirst,
        ...earlyCalls,
        ...lateCalls,
      ]);
      expect(await store().listToolCalls(c.id, { turnIds: [] })).toEqual([]);
      expect((await store().listTurns(c.id)).map((t) => t.id)).toHaveLength(3);
    });

    it('lists the calls of turns that started at the same instant turn by turn', async () => {
      const { c } = await setup();
      // A virtual clock: every turn and call at T0. Recorded in the order they ran.
      const [first, second] = [turn(c.id), turn(c.id)];
      const firstCalls = [
        toolCall(c.id, first.id, { id: 'f1', round: 1 }),
        toolCall(c.id, first.id, { id: 'f2', round: 2 }),
        toolCall(c.id, first.id, { id: 'f3', round: 3 }),
      ];
      const secondCalls = [toolCall(c.id, second.id, { id: 's1', round: 1 })];
      await store().insertTurn(first, firstCalls);
      await store().insertTurn(second, secondCalls);
      // A turn not recorded yet (its call committed on its own) comes after them.
      const running = toolCall(c.id, 'turn_running', { id: 'r1', round: 1 });
      await store().insertToolCalls([running]);

      expect((await store().listToolCalls(c.id)).map((call) => call.id)).toEqual(['f1', 'f2', 'f3', 's1', 'r1']);
    });

    it("refuses to write another turn's call with a turn", async () => {
      const { c } = await setup();
      const [t, other] = [turn(c.id), turn(c.id)];
      await expect(store().insertTurn(t, [toolCall(c.id, other.id)])).rejects.toThrow(/not a call of turn/);
      expect(await store().listTurns(c.id)).toEqual([]);
    });
  });
}
