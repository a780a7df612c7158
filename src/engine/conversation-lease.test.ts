import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Store } from '../store/store.ts';
import { waitFor } from '../../test/kit/wait-for.ts';
import { ConversationLeases, type ConversationLeasesOptions, type HeldLease } from './conversation-lease.ts';

/**
 * The lease table of decision 004 in memory: one compare-and-set per take or renewal, like the
 * store's. `holdBack` keeps the next statements of owner "me" from reaching it until released.
 */
function leaseTable() {
  const rows = new Map<string, { owner: string; until: number }>();
  const takes: string[] = [];
  const renewals: string[] = [];
  let gate: Promise<void> | undefined;
  const store = {
    async acquireLease(conversationId: string, owner: string, now: Date, until: Date) {
      if (owner === 'me') await gate;
      takes.push(owner);
      const row = rows.get(conversationId);
      if (row && row.owner !== owner && row.until > now.getTime()) return false;
      rows.set(conversationId, { owner, until: until.getTime() });
      return true;
    },
    async renewLease(conversationId: string, owner: string, until: Date) {
      if (owner === 'me') await gate;
      renewals.push(owner);
      const row = rows.get(conversationId);
      if (row?.owner !== owner) return false;
      row.until = until.getTime();
      return true;
    },
    async releaseLease(conversationId: string, owner: string) {
      if (rows.get(conversationId)?.owner === owner) rows.delete(conversationId);
    },
  };
  return {
    store: store as unknown as Store,
    rows,
    takes,
    renewals,
    takeAs: (owner: string) => store.acquireLease('conv', owner, new Date(), new Date(Date.now() + 60_000)),
    holdBack: () => {
      let open!: () => void;
      gate = new Promise<void>((resolve) => (open = resolve));
      return () => {
        gate = undefined;
        open();
      };
    },
  };
}

const TTL_MS = 90; // renewed every 30 ms
const leasesFor = (store: Store, stallMs: number) =>
  new ConversationLeases({
    store,
    shared: true,
    owner: 'stuck',
    now: () => new Date(),
    logger: pino({ level: 'silent' }),
    ttlMs: TTL_MS,
    stallMs,
  });

describe('a conversation lease', () => {
  it(
    'is no longer renewed when its holder makes no progress, so another process takes over, and the holder ' +
      'learns it lost it',
    async () => {
      const { store, takes, renewals, takeAs } = leaseTable();
      let held: HeldLease | undefined;
      let finish = () => undefined as void;
      const work = leasesFor(store, 2 * (TTL_MS / 3)).hold(
        'conv',
        (lease) => {
          held = lease;
          return new Promise<void>((resolve) => (finish = resolve));
        },
        new AbortController().signal,
      );

      // A holder that could not move forward: after two silent renewals the lease lapses.
      await waitFor(() => takeAs('other'), { what: 'another process taking the lease over', timeoutMs: 5000 });
      expect([...takes, ...renewals].filter((owner) => owner === 'stuck').length).toBeGreaterThanOrEqual(2);
      expect(held!.lost.aborted).toBe(false);
      held!.progress(); // it moves again: its next renewal finds the lease taken
      await waitFor(() => held!.lost.aborted, { what: 'the stalled holder told it lost the lease' });
      finish();
      await work;
    },
  );

  it('is kept while its holder reports progress', async () => {
    const { store, renewals, takeAs } = leaseTable();
    let finish = () => undefined as void;
    let lost: AbortSignal | undefined;
    const work = leasesFor(store, 2 * (TTL_MS / 3)).hold(
      'conv',
      (lease) => {
        lost = lease.lost;
        const beat = setInterval(() => lease.progress(), 10);
        return new Promise<void>((resolve) => (finish = () => (clearInterval(beat), resolve())));
      },
      new AbortController().signal,
    );

    // Well past the silence allowed: renewed all along, never free for another process.
    await waitFor(() => renewals.filter((owner) => owner === 'stuck').length >= 8, {
      what: 'eight renewals',
      timeoutMs: 5000,
    });
    expect(await takeAs('other')).toBe(false);
    expect(lost!.aborted).toBe(false);
    finish();
    await work;
    await waitFor(() => takeAs('other'), { what: 'the lease let go once its keep ended', timeoutMs: 5000 });
  });
});

describe('a sticky lease (kept after its work)', () => {
  const sticky = (store: Store, events: string[], options: Partial<ConversationLeasesOptions> = {}) =>
    new ConversationLeases({
      store,
      shared: true,
      owner: 'me',
      now: () => new Date(),
      logger: pino({ level: 'silent' }),
      ttlMs: 60_000,
      keepMs: 60_000,
      hooks: {
        acquired: async (id) => void events.push(`acquired ${id}`),
        releasing: async (id) => void events.push(`releasing ${id}`),
      },
      released: (id) => events.push(`released ${id}`),
      ...options,
    });
  const signal = new AbortController().signal;

  it("serves the conversation's next work without taking it again, until another process asks for it", async () => {
    const { store, takes, takeAs } = leaseTable();
    const events: string[] = [];
    const leases = sticky(store, events);
    await leases.hold('conv', async () => undefined, signal);
    await leases.hold('conv', async () => undefined, signal);
    await leases.hold('conv', async () => undefined, signal);
    expect(takes).toEqual(['me']); // one take for three turns, no release
    expect(events).toEqual(['acquired conv']);
    expect(await takeAs('other')).toBe(false);

    leases.wantedElsewhere('conv'); // idle here: let go at once
    await waitFor(() => events.includes('released conv'), { what: 'the kept lease let go' });
    expect(events).toEqual(['acquired conv', 'releasing conv', 'released conv']);
    expect(await takeAs('other')).toBe(true);
  });

  it('lets go at the end of the work when another process asked for it meanwhile, and at shutdown', async () => {
    const { store, takeAs } = leaseTable();
    const events: string[] = [];
    const leases = sticky(store, events);
    await leases.hold(
      'conv',
      async () => {
        leases.wantedElsewhere('conv'); // busy here: noted
        expect(events).toEqual(['acquired conv']);
      },
      signal,
    );
    expect(events).toEqual(['acquired conv', 'releasing conv', 'released conv']);
    expect(await takeAs('other')).toBe(true);

    await leases.hold('mine', async () => undefined, signal);
    await leases.releaseKept();
    expect(events.slice(-2)).toEqual(['releasing mine', 'released mine']);
  });

  it('is numbered when taken: kept, it keeps its number; taken again after another process, a new one', async () => {
    const { store, takeAs } = leaseTable();
    const leases = sticky(store, []);
    expect(leases.heldSince('conv')).toBeUndefined();
    const numbers: Array<number | undefined> = [];
    const work = async (lease: HeldLease) => void numbers.push(lease.taken);
    await leases.hold('conv', work, signal);
    const first = leases.heldSince('conv');
    expect(first).toBeDefined();
    await leases.hold('conv', work, signal); // kept: the same lease, held all along
    expect(numbers).toEqual([first, first]);

    leases.wantedElsewhere('conv');
    await waitFor(() => leases.heldSince('conv') === undefined, { what: 'the kept lease let go' });
    expect(await takeAs('other')).toBe(true); // the other process had it meanwhile
    await store.releaseLease('conv', 'other');
    await leases.hold('conv', work, signal);
    expect(numbers[2]).toBeDefined();
    expect(numbers[2]).not.toBe(first);
    expect(leases.heldSince('conv')).toBe(numbers[2]);
  });

  it('is renewed in place past half its time (same number, no catching up), taken anew near its end', async () => {
    const { store, takes, renewals } = leaseTable();
    const { leases, events, numbers, work, clock } = onClock(store);
    await leases.hold('conv', work, signal); // taken at 0, until 10 s
    clock.now = 4000; // 6 s left: kept as it is
    await leases.hold('conv', work, signal);
    clock.now = 6000; // 4 s left: renewed in place, until 16 s
    await leases.hold('conv', work, signal);
    expect(takes).toHaveLength(1);
    expect(renewals).toEqual(['me']);
    expect(new Set(numbers).size).toBe(1);
    expect(events).toEqual(['acquired conv']);

    clock.now = 14_500; // 1.5 s left: too close to its end for other processes' clocks, taken as a new lease
    await leases.hold('conv', work, signal);
    expect(takes).toHaveLength(2);
    expect(numbers[3]).not.toBe(numbers[0]);
    expect(events).toEqual(['acquired conv', 'acquired conv']);
  });

  it('is taken anew, with a catch-up, when another process took it and let go while renewing it', async () => {
    const { store, holdBack } = leaseTable();
    const { leases, events, numbers, work, clock } = onClock(store);
    await leases.hold('conv', work, signal); // until 10 s
    clock.now = 6000; // 4 s left: renewed in place, but the statement is slow to arrive
    const open = holdBack();
    const second = leases.hold('conv', work, signal);
    clock.now = 11_000; // lapsed meanwhile: another process takes it, works, and lets go
    expect(await store.acquireLease('conv', 'other', new Date(clock.now), new Date(clock.now + 10_000))).toBe(true);
    await store.releaseLease('conv', 'other');
    open();
    await second;
    expect(numbers[1]).toBeDefined();
    expect(numbers[1]).not.toBe(numbers[0]);
    expect(events).toEqual(['acquired conv', 'acquired conv']);
  });

  it('is taken again only after a release on its way (the keep timer letting go) has ended', async () => {
    const { store, rows } = leaseTable();
    let releasing!: () => void;
    let called = false;
    const leases = sticky(store, [], {
      keepMs: 5,
      hooks: { releasing: () => ((called = true), new Promise<void>((resolve) => (releasing = resolve))) },
    });
    await leases.hold('conv', async () => undefined, signal);
    await waitFor(() => called, { what: 'the keep timer letting go' });
    let finish!: () => void;
    let started = false;
    const working = new Promise<void>((resolve) => (finish = resolve));
    const next = leases.hold('conv', () => ((started = true), working), signal);
    releasing();
    await waitFor(() => started, { what: 'the next work' });
    await new Promise((resolve) => setTimeout(resolve, 10)); // a release still on its way would be done
    expect(rows.get('conv')?.owner).toBe('me'); // the row is there, and this process's, while the work runs
    finish();
    await next;
  });
});

/** Leases on a clock the test sets (10 s each, kept a minute), with what their work saw. */
function onClock(store: Store) {
  const clock = { now: 0 };
  const events: string[] = [];
  const numbers: Array<number | undefined> = [];
  const leases = new ConversationLeases({
    store,
    shared: true,
    owner: 'me',
    now: () => new Date(clock.now),
    logger: pino({ level: 'silent' }),
    ttlMs: 10_000,
    keepMs: 60_000,
    hooks: { acquired: async (id) => void events.push(`acquired ${id}`) },
  });
  const work = async (lease: HeldLease) => void numbers.push(lease.taken);
  return { leases, events, numbers, work, clock };
}
