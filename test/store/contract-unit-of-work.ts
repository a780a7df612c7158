import { describe, expect, it } from 'vitest';
import { emptyProfile } from '../../src/core/profile.ts';
import type { Store } from '../../src/store/store.ts';
import { message, participantWithConversation, T0, toolCall, turn } from './store-fixtures.ts';

/**
 * A turn's unit of work (decision 020): on PostgreSQL its writes go out without waiting for each
 * answer, so a write can fail after the code that issued it has moved on. It must still undo the
 * whole unit, and the caller must hear what failed first, not the aborted statements behind it.
 */
export function unitOfWorkContract(store: () => Store): void {
  describe('unit of work', () => {
    it('a write that fails undoes the unit even when nothing awaited its answer', async () => {
      const { c } = await participantWithConversation(store());
      const first = turn(c.id);
      const unit = store().transaction(async (tx) => {
        await tx.appendMessages([{ ...message(c.id), text: 'written before the failure' }]);
        await tx.insertTurn(first, [toolCall(c.id, first.id)]);
        await tx.insertTurn({ ...turn(c.id), id: first.id }); // the same id: refused by the database
        await tx.appendEvents([
          { conversationId: c.id, seq: 1, turnNo: 1, type: 'status', payload: { text: 'after' }, at: T0 },
        ]);
        return 'done';
      });
      await expect(unit).rejects.toThrow(/unique|duplicate/i);
      await expect(unit).rejects.not.toThrow(/current transaction is aborted/);
      expect(await store().listMessages(c.id)).toEqual([]);
      expect(await store().listTurns(c.id)).toEqual([]);
      expect(await store().listToolCalls(c.id)).toEqual([]);
      expect(await store().listEvents(c.id)).toEqual([]);
    });

    it('writes issued together keep each one its own order, and all commit', async () => {
      const { p, c } = await participantWithConversation(store());
      const t = turn(c.id);
      const [appended] = await store().transaction((tx) =>
        Promise.all([
          tx.appendMessages([
            { ...message(c.id), text: 'one' },
            { ...message(c.id), text: 'two' },
          ]),
          tx.insertTurn(t, [toolCall(c.id, t.id)]),
          tx.saveProfile(emptyProfile(p.id, T0)),
        ]),
      );
      expect(appended.map((m) => [m.seq, m.text])).toEqual([
        [1, 'one'],
        [2, 'two'],
      ]);
      expect((await store().listMessages(c.id)).map((m) => m.text)).toEqual(['one', 'two']);
      expect(await store().listTurns(c.id)).toHaveLength(1);
      expect(await store().listToolCalls(c.id)).toHaveLength(1);
      expect(await store().getProfile(p.id)).toBeDefined();
    });

    it('a connection whose unit of work failed serves the next one', async () => {
      const { c } = await participantWithConversation(store());
      const t = turn(c.id);
      for (let attempt = 0; attempt < 12; attempt++) {
        await expect(
          store().transaction(async (tx) => {
            await tx.insertTurn(t);
            await tx.insertTurn(t);
          }),
        ).rejects.toThrow(/unique|duplicate/i);
      }
      await store().transaction((tx) => tx.insertTurn(t));
      expect(await store().listTurns(c.id)).toHaveLength(1);
    });
  });
}
