import { describe, expect, it } from 'vitest';
import { emptyProfile } from '../../src/core/profile.ts';
import { type Fence, FenceFailed } from '../../src/store/fence.ts';
import type { Store, StoreTx } from '../../src/store/store.ts';
import { at, inboxItem, message, participantWithConversation, T0, toolCall, turn } from './store-fixtures.ts';

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

    describe('fences: checked by the database, so nothing in the unit waits for their answers', () => {
      /** A conversation with one message (seq 1), a pending and an answered inbox item, and a paused participant. */
      async function scene() {
        const { p, c } = await participantWithConversation(store());
        await store().appendMessages([{ ...message(c.id), text: 'before' }]);
        const pending = inboxItem({ conversationId: c.id, participantId: p.id });
        const answered = inboxItem({ conversationId: c.id, participantId: p.id });
        for (const item of [pending, answered]) await store().insertInbox(item);
        await store().completeInbox(answered.id, 'processed', at(1));
        const paused = (await participantWithConversation(store())).p;
        await store().updateParticipant(paused.id, { status: 'paused' }, at(1));
        return { p, c, pending, answered, paused };
      }
      type Scene = Awaited<ReturnType<typeof scene>>;
      const cases: Array<{
        fence: Fence;
        holds: (tx: StoreTx, s: Scene) => Promise<unknown>;
        fails: (tx: StoreTx, s: Scene) => Promise<unknown>;
      }> = [
        {
          fence: 'participant',
          holds: (tx, s) => tx.lockActiveParticipant(s.p.id),
          fails: (tx, s) => tx.lockActiveParticipant(s.paused.id),
        },
        {
          fence: 'version',
          holds: (tx, s) => tx.updateConversationFenced(s.c.id, s.c.version, { subState: 'FEEDBACK' }, at(2)),
          fails: (tx, s) => tx.updateConversationFenced(s.c.id, s.c.version + 1, { subState: 'FEEDBACK' }, at(2)),
        },
        {
          fence: 'inbox',
          holds: (tx, s) => tx.completeInboxFenced(s.pending.id, 'processed', at(2)),
          fails: (tx, s) => tx.completeInboxFenced(s.answered.id, 'processed', at(2)),
        },
        {
          fence: 'transcript',
          holds: (tx, s) => tx.appendMessages([{ ...message(s.c.id), text: 'numbered' }], { after: 1 }),
          fails: (tx, s) => tx.appendMessages([{ ...message(s.c.id), text: 'numbered' }], { after: 0 }),
        },
      ];

      for (const { fence, holds, fails } of cases) {
        it(`${fence}: holding, the unit commits; failing, it keeps nothing and says which fence`, async () => {
          const s = await scene();
          const t = turn(s.c.id);
          // Writes before and after the fence. PostgreSQL answers none of them before the commit
          // (the fence resolves once sent, and fails the commit); SQLite's fence fails at once.
          const unit = (fence: (tx: StoreTx) => Promise<unknown>) =>
            store().transaction(async (tx) => {
              await tx.insertTurn(t);
              await fence(tx);
              await tx.appendEvents([
                { conversationId: s.c.id, seq: 1, turnNo: 1, type: 'status', payload: { text: 'x' }, at: T0 },
              ]);
            });
          const failed = await unit((tx) => fails(tx, s)).then(
            () => undefined,
            (error: unknown) => error,
          );
          expect(failed).toBeInstanceOf(FenceFailed);
          expect((failed as FenceFailed).fence).toBe(fence);
          expect(await store().listTurns(s.c.id)).toEqual([]);
          expect(await store().listEvents(s.c.id)).toEqual([]);
          expect(await store().getConversation(s.c.id)).toEqual(s.c);
          expect((await store().listMessages(s.c.id)).map((m) => m.text)).toEqual(['before']);

          await unit((tx) => holds(tx, s));
          expect(await store().listTurns(s.c.id)).toHaveLength(1);
        });
      }

      it('what holding fences wrote: numbered messages, the next version, the answered item', async () => {
        const s = await scene();
        const appended = await store().transaction(async (tx) => {
          const numbered = tx.appendMessages(
            [
              { ...message(s.c.id), text: 'two' },
              { ...message(s.c.id), text: 'three' },
            ],
            {
              after: 1,
            },
          );
          await tx.updateConversationFenced(s.c.id, s.c.version, { subState: 'FEEDBACK' }, at(2));
          await tx.completeInboxFenced(s.pending.id, 'processed', at(2));
          return numbered;
        });
        expect(appended.map((m) => [m.seq, m.text])).toEqual([
          [2, 'two'],
          [3, 'three'],
        ]);
        expect((await store().listMessages(s.c.id)).map((m) => [m.seq, m.text])).toEqual([
          [1, 'before'],
          [2, 'two'],
          [3, 'three'],
        ]);
        expect(await store().getConversation(s.c.id)).toMatchObject({ version: s.c.version + 1, subState: 'FEEDBACK' });
        expect(await store().getInbox(s.pending.id)).toMatchObject({ status: 'processed', processedAt: at(2) });
      });
    });
  });
}
