import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Channel } from '../channels/channel.ts';
import type { OutboxItem } from '../core/domain.ts';
import type { Store } from '../store/store.ts';
import { ChannelGate } from './channel-gate.ts';
import { OutboxDispatcher } from './outbox-dispatcher.ts';
import { waitFor } from '../../test/kit/wait-for.ts';
import { classifyStoreError } from '../store/classify-faults.ts';

/**
 * The outbox calls of a store, in memory, with the same claim rule as the real ones (the
 * first unsent item of each conversation, when due, hidden until `leaseUntil`), and a switch that
 * makes the store unreachable.
 */
function outboxStore(items: OutboxItem[]) {
  const state = { down: false, marks: 0, claims: 0, refuse: new Set<string>(), released: [] as string[] };
  const reachable = () => {
    if (state.down) throw classifyStoreError(new Error('Connection terminated unexpectedly'));
  };
  const store = {
    async claimDueOutbox(now: Date, limit: number, leaseUntil: Date) {
      reachable();
      state.claims += 1;
      const firsts = new Map<string, OutboxItem>();
      for (const item of items)
        if (item.status === 'pending' && !firsts.has(item.conversationId)) firsts.set(item.conversationId, item);
      const due = [...firsts.values()].filter((item) => item.nextAttemptAt <= now).slice(0, limit);
      for (const item of due) item.nextAttemptAt = leaseUntil;
      return due.map((item) => ({ ...item }));
    },
    batched: <T>(work: (ops: unknown) => Promise<T>) => work(store),
    /** One statement: every mark is written, or (a refused row, an outage) none. */
    async markOutboxSentMany(marks: ReadonlyArray<{ id: string; at: Date; attempts: number }>) {
      reachable();
      const refused = marks.find((mark) => state.refuse.has(mark.id));
      if (refused) throw new Error('value too long for type character varying');
      state.marks += 1;
      for (const { id, at, attempts } of marks)
        Object.assign(
          items.find((item) => item.id === id)!,
          { status: 'sent', sentAt: at, attempts },
        );
    },
    async releaseOutbox(ids: readonly string[], at: Date) {
      reachable();
      state.released.push(...ids);
      for (const item of items) if (ids.includes(item.id) && item.status === 'pending') item.nextAttemptAt = at;
    },
    async markOutboxAttemptFailed(
      id: string,
      failure: { attempts: number; error: string; nextAttemptAt: Date | null },
    ) {
      reachable();
      Object.assign(
        items.find((item) => item.id === id)!,
        {
          attempts: failure.attempts,
          lastError: failure.error,
          status: failure.nextAttemptAt ? 'pending' : 'failed',
          nextAttemptAt: failure.nextAttemptAt ?? new Date(0),
        },
      );
    },
  };
  return { store: store as unknown as Store, state };
}

function item(id: string, conversationId: string, at: Date): OutboxItem {
  return {
    id,
    conversationId,
    participantId: null,
    channel: 'sink',
    recipient: '+14165550100',
    kind: 'text',
    text: id,
    poll: null,
    idempotencyKey: `key_${id}`,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: at,
    lastError: null,
    createdAt: at,
    sentAt: null,
    providerMessageId: null,
    deliveryStatus: null,
    deliveryStatusAt: null,
    deliveryError: null,
  };
}

function setup(
  items: OutboxItem[],
  onSend: (text: string) => unknown = () => undefined,
  options: { concurrency?: number; now?: () => Date } = {},
) {
  const sent: string[] = [];
  const channel: Channel = {
    name: 'sink',
    capabilities: {} as Channel['capabilities'],
    async send(message) {
      sent.push(message.text);
      await onSend(message.text);
    },
  };
  const clock = { now: options.now ?? (() => new Date(1_000_000)), sleep: async () => undefined };
  const { store, state } = outboxStore(items);
  const logger = pino({ level: 'silent' });
  const dispatcher = new OutboxDispatcher({
    store,
    channels: new Map([['sink', channel]]),
    gate: new ChannelGate({ store, clock, logger }),
    clock,
    logger,
    maxAttempts: 3,
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  });
  return { dispatcher, sent, state };
}

describe('OutboxDispatcher', () => {
  it("sends a conversation's messages one after the other, in order, each once", async () => {
    const at = new Date(0);
    const { dispatcher, sent } = setup([
      item('a1', 'a', at),
      item('b1', 'b', at),
      item('a2', 'a', at),
      item('a3', 'a', at),
    ]);
    await dispatcher.kick();
    expect(sent.filter((text) => text.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
    expect(sent.sort()).toEqual(['a1', 'a2', 'a3', 'b1']);
  });

  it('claims ahead of its free slots: one claim serves several deliveries, each once, in order', async () => {
    const at = new Date(0);
    const rows = ['a', 'b', 'c', 'd', 'e', 'f'].flatMap((c) => [item(`${c}1`, c, at), item(`${c}2`, c, at)]);
    let open = 0;
    let most = 0;
    const { dispatcher, sent, state } = setup(
      rows,
      async () => {
        most = Math.max(most, ++open);
        await new Promise((resolve) => setImmediate(resolve));
        open -= 1;
      },
      { concurrency: 2 },
    );
    await dispatcher.kick();
    await waitFor(() => sent.length === 12, { what: 'every row sent' });
    expect(most).toBe(2); // never more sends at once than slots
    expect(new Set(sent).size).toBe(12);
    for (const c of ['a', 'b', 'c', 'd', 'e', 'f'])
      expect(sent.filter((text) => text[0] === c)).toEqual([`${c}1`, `${c}2`]);
    // Claiming only for the free slots took 13 claims here; claiming a queue ahead, 7.
    expect(state.claims).toBeLessThanOrEqual(8);
  });

  it('sends rows a commit handed over in order without claiming them; releases the rest if one fails', async () => {
    const claimedUntil = new Date(2_000_000); // written claimed by this process: no claim would find them now
    const handed = [item('h1', 'h', claimedUntil), item('h2', 'h', claimedUntil), item('h3', 'h', claimedUntil)];
    const { dispatcher, sent, state } = setup(handed, (text) => {
      if (text === 'h2') throw new Error('receiver down');
    });
    dispatcher.deliverClaimed(handed.map((row) => ({ ...row })));
    await waitFor(() => state.released.length > 0, { what: 'the rest released' });
    expect(sent).toEqual(['h1', 'h2']);
    expect(state.claims).toBe(0);
    // The "sent" mark is written with others shortly after the send (decision 020).
    await waitFor(() => handed[0]!.status === 'sent', { what: "h1's sent mark" });
    expect(handed.map((row) => row.status)).toEqual(['sent', 'pending', 'pending']);
    expect(state.released).toEqual(['h3']);
    expect(handed[2]!.nextAttemptAt).toEqual(new Date(1_000_000)); // claimable now, behind h2's retry
  });

  it('claims again once a commit carrying the "sent" marks wrote them (a claim meanwhile found it busy)', async () => {
    const claimedUntil = new Date(2_000_000);
    const handed = item('t1', 't', claimedUntil); // a turn's reply, handed over by its commit
    const reminder = item('t2', 't', new Date(0)); // queued behind it, for the claim
    const { dispatcher, sent } = setup([handed, reminder]);
    dispatcher.deliverClaimed([{ ...handed }]);
    while (!sent.includes('t1')) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve)); // its mark waits to be written with others
    const marks = dispatcher.takeMarks(); // the next turn's commit takes them...
    expect(marks.map((mark) => mark.id)).toEqual(['t1']);
    await dispatcher.kick(); // ...and a claim runs before that commit ends: t1 still pending, t2 must wait
    expect(sent).toEqual(['t1']);
    Object.assign(handed, { status: 'sent' }); // what that commit wrote
    dispatcher.marksWritten(marks);
    await waitFor(() => sent.includes('t2'), { what: 't2 claimed at once, not at the next poll' });
    expect(sent).toEqual(['t1', 't2']);
  });

  it('never sends twice a sent row a commit is marking, if its claim runs out meanwhile (a clock jump)', async () => {
    let now = new Date(1_000_000);
    const handed = item('j1', 'j', new Date(2_000_000)); // claimed by this process until 2_000_000
    const { dispatcher, sent } = setup([handed], () => undefined, { now: () => now });
    dispatcher.deliverClaimed([{ ...handed }]);
    while (!sent.includes('j1')) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const marks = dispatcher.takeMarks(); // a turn's commit carries the mark...
    now = new Date(3_000_000); // ...while the (virtual) clock moves past the claim
    await dispatcher.kick(); // the claim finds j1 pending and due
    expect(sent).toEqual(['j1']);
    Object.assign(handed, { status: 'sent' });
    dispatcher.marksWritten(marks);
    await dispatcher.kick();
    expect(sent).toEqual(['j1']);
  });

  it('never sends twice a row a claim took before its commit handed it over (a clock jump in between)', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handed = [item('k1', 'k', new Date(2_000_000)), item('k2', 'k', new Date(2_000_000))];
    const { dispatcher, sent } = setup(handed, (text) => (text === 'k1' ? gate : undefined), {
      now: () => new Date(3_000_000), // the claims written with the rows have run out already
    });
    void dispatcher.kick(); // the claim takes k1 (the conversation's first) and starts sending it
    while (!sent.includes('k1')) await new Promise((resolve) => setImmediate(resolve));
    dispatcher.deliverClaimed(handed.map((row) => ({ ...row }))); // then the commit hands both over
    release();
    await waitFor(() => sent.includes('k2'), { what: 'k2, after k1' });
    await dispatcher.kick();
    expect(sent).toEqual(['k1', 'k2']);
  });

  it('never sends again a row a claim sent and marked before its commit handed it over', async () => {
    const handed = item('m1', 'm', new Date(2_000_000));
    const { dispatcher, sent } = setup([handed], () => undefined, { now: () => new Date(3_000_000) });
    await dispatcher.kick(); // the claim ran out: m1 is claimed, sent...
    await waitFor(() => handed.status === 'sent', { what: "m1's mark" }); // ...and marked
    dispatcher.deliverClaimed([{ ...handed, status: 'pending' }]); // the commit's hand-over comes late
    await dispatcher.kick(); // idle: nothing in flight, nothing claimable
    expect(sent).toEqual(['m1']);
  });

  it(
    'does not send again what the store missed marking sent, and sends the next message as soon as the store ' +
      'is back',
    async () => {
      const at = new Date(0);
      const items = [item('m1', 'c', at), item('m2', 'c', at)];
      // The store goes away between the first send and its "sent" mark.
      const { dispatcher, sent, state } = setup(items, (text) => (state.down = text === 'm1'));
      await dispatcher.kick();
      expect(sent).toEqual(['m1']);
      expect(items[0]!.status).toBe('pending'); // its claim still hides it; it must not be sent twice

      await dispatcher.kick(); // still down: nothing moves, nothing is lost
      expect(sent).toEqual(['m1']);

      state.down = false;
      await dispatcher.kick();
      expect(sent).toEqual(['m1', 'm2']);
      expect(items.map((entry) => [entry.status, entry.attempts])).toEqual([
        ['sent', 1],
        ['sent', 1],
      ]);
    },
  );

  it('gives up marking a row the store refuses (not an outage), so the other conversations keep going', async () => {
    const at = new Date(0);
    const items = [item('bad', 'c', at), item('x1', 'x', at)];
    const { dispatcher, sent, state } = setup(items);
    state.refuse.add('bad');
    await dispatcher.kick();
    await dispatcher.kick();
    await dispatcher.kick();
    expect(sent.sort()).toEqual(['bad', 'x1']);
    items.push(item('x2', 'x', at));
    await dispatcher.kick();
    expect(sent).toContain('x2');
  });

  it("keeps delivering to other conversations while one receiver hangs; holds that one's next message", async () => {
    const at = new Date(0);
    const items = [
      item('slow1', 'slow', at),
      item('slow2', 'slow', at),
      item('fast1', 'fast', at),
      item('fast2', 'fast', at),
    ];
    let release!: () => void;
    const hung = new Promise<void>((resolve) => (release = resolve));
    const { dispatcher, sent } = setup(items, (text) => (text === 'slow1' ? hung : undefined));
    const idle = dispatcher.kick();
    await waitFor(() => sent.includes('fast2'), { what: "the other conversation's second message", timeoutMs: 2000 });
    expect(sent).not.toContain('slow2'); // its predecessor is still in flight
    release();
    await idle;
    expect(sent.filter((text) => text.startsWith('slow'))).toEqual(['slow1', 'slow2']);
    expect(items.every((entry) => entry.status === 'sent')).toBe(true);
  });

  it('claims while deliveries are in flight, never more at once than its concurrency', async () => {
    const at = new Date(0);
    const items = Array.from({ length: 12 }, (_, index) => item(`m${index}`, `c${index}`, at));
    let inFlight = 0;
    let most = 0;
    const { dispatcher, sent } = setup(
      items,
      async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
      },
      { concurrency: 3 },
    );
    await dispatcher.kick();
    expect(sent).toHaveLength(12);
    expect(most).toBe(3);
  });
});
