import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.ts';
import { recordsContract } from './contract-records.ts';
import { queuesContract } from './contract-queues.ts';
import { eventsContract } from './contract-events.ts';
import { channelsContract } from './contract-channels.ts';
import { leasesContract } from './contract-leases.ts';
import { crmContract } from './contract-crm.ts';
import { searchContract } from './contract-search.ts';
import { unitOfWorkContract } from './contract-unit-of-work.ts';
import { erasureContract } from './contract-erasure.ts';
import { emptyProfile } from '../../src/core/profile.ts';
import { conversation, message, participant, T0 } from './store-fixtures.ts';

export interface StoreBackend {
  dialect: Store['dialect'];
  /** A fresh, empty, migrated store for one test. */
  open(): Promise<Store>;
  /**
   * How many of the store's statements are waiting right now for a lock on `table` another
   * transaction holds (PostgreSQL). What a "still blocked" check waits on instead of a sleep.
   */
  lockWaiters?(table: string): Promise<number>;
}

/**
 * The contract every `Store` adapter must meet. Each test gets its own empty store, so tests
 * of list and claim operations see only their own rows.
 */
export function describeStoreContract(name: string, backend: StoreBackend): void {
  describe(`Store contract: ${name}`, () => {
    let current: Store | undefined;
    const store = (): Store => {
      if (!current) throw new Error('store not open');
      return current;
    };

    beforeEach(async () => {
      current = await backend.open();
    });
    afterEach(async () => {
      await current?.close();
      current = undefined;
    });

    it('reports its dialect and answers ping', async () => {
      expect(store().dialect).toBe(backend.dialect);
      await expect(store().ping()).resolves.toBeUndefined();
    });

    describe('transactions', () => {
      it('commits the work and returns its result', async () => {
        const p = participant();
        const c = conversation(p.id);
        const result = await store().transaction(async (tx) => {
          await tx.insertParticipant(p);
          await tx.insertConversation(c);
          return (await tx.appendMessages([{ ...message(c.id), text: 'inside' }]))[0]!.seq;
        });
        expect(result).toBe(1);
        expect(await store().getParticipant(p.id)).toEqual(p);
        expect((await store().listMessages(c.id)).map((m) => m.text)).toEqual(['inside']);
      });

      it('rolls back everything when the work throws', async () => {
        const p = participant();
        const c = conversation(p.id);
        const boom = new Error('boom');
        await expect(
          store().transaction(async (tx) => {
            await tx.insertParticipant(p);
            await tx.insertConversation(c);
            await tx.appendMessages([message(c.id)]);
            await tx.saveProfile(emptyProfile(p.id, T0));
            throw boom;
          }),
        ).rejects.toBe(boom);
        expect(await store().getParticipant(p.id)).toBeUndefined();
        expect(await store().findParticipantByPhone(p.phoneNumber)).toBeUndefined();
        expect(await store().getConversation(c.id)).toBeUndefined();
        expect(await store().listMessages(c.id)).toEqual([]);
        expect(await store().getProfile(p.id)).toBeUndefined();
        // The phone number is free again.
        await expect(store().insertParticipant(p)).resolves.toBeUndefined();
      });

      it('never lets a plain call see or join an open transaction', async () => {
        const p = participant();
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let inserted!: () => void;
        const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
        const tx = store().transaction(async (t) => {
          await t.insertParticipant(p);
          inserted();
          await gate;
          throw new Error('roll back');
        });
        await insertedSignal;
        // Issued while the transaction is open: it must not see the uncommitted row (SQLite: it
        // waits for the transaction to end; PostgreSQL: it runs outside it).
        const plain = store().findParticipantByPhone(p.phoneNumber);
        // Settled before the transaction ends: PostgreSQL has answered the call; node:sqlite is
        // synchronous, so after one turn of the event loop a call not waiting for the transaction
        // would have answered too.
        if (store().dialect === 'postgres') await plain;
        else await new Promise((resolve) => setImmediate(resolve));
        release();
        await expect(tx).rejects.toThrow('roll back');
        expect(await plain).toBeUndefined();
      });

      it('runs concurrent transactions without losing writes', async () => {
        const p = participant();
        const c = conversation(p.id);
        await store().insertParticipant(p);
        await store().insertConversation(c);
        // Each transaction reads the version, appends, and writes with compare-and-set; a lost
        // race throws (rolling its append back) and retries.
        const conflict = new Error('version conflict');
        let retries = 0;
        await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (async () => {
              for (;;) {
                try {
                  return await store().transaction(async (tx) => {
                    const current = (await tx.getConversation(c.id))!;
                    await tx.appendMessages([{ ...message(c.id), text: `w${i}` }]);
                    const updated = await tx.updateConversation(
                      c.id,
                      current.version,
                      { state: `S${i}` },
                      current.updatedAt,
                    );
                    if (!updated) throw conflict;
                    return updated;
                  });
                } catch (error) {
                  if (error !== conflict) throw error;
                  retries += 1;
                }
              }
            })(),
          ),
        );
        expect((await store().getConversation(c.id))!.version).toBe(9);
        const messages = await store().listMessages(c.id);
        expect(messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
        expect(messages.map((m) => m.text).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `w${i}`));
        // SQLite transactions are serial, so they never conflict.
        if (store().dialect === 'sqlite') expect(retries).toBe(0);
      });
    });

    recordsContract(store, backend);
    queuesContract(store);
    eventsContract(store);
    channelsContract(store);
    leasesContract(store);
    crmContract(store);
    searchContract(store);
    unitOfWorkContract(store);
    erasureContract(store);
  });
}
