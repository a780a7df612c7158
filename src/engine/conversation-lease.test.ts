import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Store } from '../store/store.ts';
import { waitFor } from '../../test/kit/wait-for.ts';
import { ConversationLeases, type HeldLease } from './conversation-lease.ts';

/** The lease table of decision 004 in memory: one compare-and-set per take, like the store's. */
function leaseTable() {
  const rows = new Map<string, { owner: string; until: number }>();
  const takes: string[] = [];
  const store = {
    async acquireLease(conversationId: string, owner: string, now: Date, until: Date) {
      takes.push(owner);
      const row = rows.get(conversationId);
      if (row && row.owner !== owner && row.until > now.getTime()) return false;
      rows.set(conversationId, { owner, until: until.getTime() });
      return true;
    },
    async releaseLease(conversationId: string, owner: string) {
      if (rows.get(conversationId)?.owner === owner) rows.delete(conversationId);
    },
  };
  return {
    store: store as unknown as Store,
    takes,
    takeAs: (owner: string) => store.acquireLease('conv', owner, new Date(), new Date(Date.now() + 60_000)),
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
      const { store, takes, takeAs } = leaseTable();
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
      expect(takes.filter((owner) => owner === 'stuck').length).toBeGreaterThanOrEqual(2);
      expect(held!.lost.aborted).toBe(false);
      held!.progress(); // it moves again: its next renewal finds the lease taken
      await waitFor(() => held!.lost.aborted, { what: 'the stalled holder told it lost the lease' });
      finish();
      await work;
    },
  );

  it('is kept while its holder reports progress', async () => {
    const { store, takes, takeAs } = leaseTable();
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
    await waitFor(() => takes.filter((owner) => owner === 'stuck').length >= 8, {
      what: 'eight renewals',
      timeoutMs: 5000,
    });
    expect(await takeAs('other')).toBe(false);
    expect(lost!.aborted).toBe(false);
    finish();
    await work;
    expect(await takeAs('other')).toBe(true); // let go at the end
  });
});
