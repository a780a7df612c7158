// @requires postgres
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { TimerCompletions } from '../../src/timers/timer-completions.ts';
import { at, participantWithConversation, timer, turn } from '../store/store-fixtures.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { pgSchemas } from '../kit/pg-schemas.ts';

const schemas = pgSchemas('timer_completions');
afterAll(() => schemas.dropAll());

describe.each(['sqlite', 'postgres'] as const)('TimerCompletions on %s', (kind) => {
  let store: Store;
  afterEach(() => store.close());

  /** `count` timers of one conversation, claimed (running), and the store's transactions counted. */
  async function claimed(count: number) {
    const env = kind === 'postgres' ? schemas.next() : undefined;
    store = await openStore(env?.DATABASE_URL ?? tempSqliteUrl(), { schema: env?.DATABASE_SCHEMA });
    const { p, c } = await participantWithConversation(store);
    for (let index = 0; index < count; index++)
      await store.scheduleTimer(timer(c.id, p.id, { id: `t${index}`, dueAt: at(index) }));
    expect(await store.claimDueTimers(at(1000), count, at(60_000))).toHaveLength(count);
    let transactions = 0;
    const counted: Store = Object.create(store, {
      transaction: {
        value: (...args: Parameters<Store['transaction']>) => (transactions++, store.transaction(...args)),
      },
    });
    return { c, completions: new TimerCompletions(counted), transactions: () => transactions };
  }

  it('writes the completions asked for while one is written in one transaction, each with its record', async () => {
    const { c, completions, transactions } = await claimed(4);
    const records = ['t0', 't1', 't2', 't3'].map((id) => turn(c.id, { id: `turn_${id}`, module: id }));
    await Promise.all(
      records.map((record, index) =>
        completions.complete({ timerId: `t${index}`, at: at(2000), record: () => record }),
      ),
    );
    // The first goes at once, alone; the three asked for meanwhile share the next.
    expect(transactions()).toBe(2);
    for (let index = 0; index < 4; index++) expect((await store.getTimer(`t${index}`))?.status).toBe('done');
    expect((await store.listTurns(c.id)).map((record) => record.module).sort()).toEqual(['t0', 't1', 't2', 't3']);
  });

  it('fails one completion alone: its neighbours in the batch are committed, it is left running', async () => {
    const { c, completions } = await claimed(4);
    const outcomes = await Promise.allSettled(
      ['t0', 't1', 't2', 't3'].map((id) =>
        completions.complete({
          timerId: id,
          at: at(2000),
          record: () => {
            if (id === 't2') throw new Error('no record for t2');
            return turn(c.id, { module: id });
          },
        }),
      ),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((await store.getTimer('t2'))?.status).toBe('running');
    for (const id of ['t0', 't1', 't3']) expect((await store.getTimer(id))?.status).toBe('done');
    expect((await store.listTurns(c.id)).map((record) => record.module).sort()).toEqual(['t0', 't1', 't3']);
  });

  it('records nothing for a timer no longer running (re-claimed elsewhere, or gone)', async () => {
    const { c, completions } = await claimed(1);
    await completions.complete({ timerId: 't0', at: at(2000), record: () => turn(c.id) });
    await completions.complete({ timerId: 't0', at: at(3000), record: () => turn(c.id) });
    await completions.complete({ timerId: 'nowhere', at: at(3000), record: () => turn(c.id) });
    expect(await store.listTurns(c.id)).toHaveLength(1);
  });
});
