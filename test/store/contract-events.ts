import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/core/domain.ts';
import type { Store } from '../../src/store/store.ts';
import { at, message, participantWithConversation } from './store-fixtures.ts';

/** The session event log: append, list after a cursor, range, prune, cascade. */
export function eventsContract(store: () => Store): void {
  const setup = () => participantWithConversation(store());
  const event = (conversationId: string, seq: number, overrides: Partial<StoredEvent> = {}): StoredEvent => ({
    conversationId,
    seq,
    turnNo: 1,
    type: 'token',
    payload: { role: 'assistant', messageId: 'msg_1', text: `t${seq}`, data: { nested: [1, null, 'x'] } },
    at: at(seq),
    ...overrides,
  });

  describe('session events', () => {
    it('appends and lists after a cursor, in seq order, with a limit', async () => {
      const { c } = await setup();
      const events = [1, 2, 3, 4, 5].map((seq) => event(c.id, seq, seq === 5 ? { turnNo: null, type: 'final' } : {}));
      await store().appendEvents(events.slice(0, 2));
      await store().appendEvents(events.slice(2));
      expect(await store().listEvents(c.id)).toEqual(events);
      expect(await store().listEvents(c.id, { afterSeq: 2, limit: 2 })).toEqual(events.slice(2, 4));
      expect(await store().listEvents(c.id, { afterSeq: 5 })).toEqual([]);
      expect(await store().eventRange(c.id)).toEqual({ first: 1, last: 5, lastTurnNo: 1, lastMessageSeq: null });
    });

    it('reports the transcript seq the newest final event announced', async () => {
      const { c } = await setup();
      const final = (seq: number, messageSeq: number) =>
        event(c.id, seq, { type: 'final', payload: { text: 'hi', data: { messageSeq } } });
      await store().appendEvents([final(1, 2), event(c.id, 2), final(3, 4), event(c.id, 4)]);
      expect((await store().eventRange(c.id))?.lastMessageSeq).toBe(4);
      await store().appendEvents([event(c.id, 5, { turnNo: null })]); // a later page without a final
      expect(await store().eventRange(c.id)).toEqual({ first: 1, last: 5, lastTurnNo: 1, lastMessageSeq: 4 });
    });

    it('refuses a seq taken twice', async () => {
      const { c } = await setup();
      await store().appendEvents([event(c.id, 1)]);
      await expect(store().appendEvents([event(c.id, 1)])).rejects.toThrow();
      expect(await store().listEvents(c.id)).toHaveLength(1);
    });

    it('refuses a seq inside a page written earlier, and keeps a gap fillable', async () => {
      const { c } = await setup();
      const events = Array.from({ length: 8 }, (_, index) => event(c.id, index + 1));
      await store().appendEvents([events[0]!, events[1]!, events[2]!, events[5]!]); // 1–3 and 6: two pages
      for (const taken of [[events[1]!], [events[2]!, events[3]!], [events[4]!, events[5]!], [events[5]!]])
        await expect(store().appendEvents(taken)).rejects.toMatchObject({ name: 'FenceFailed', fence: 'events' });
      // All or nothing: a taken seq in a later page writes none of the earlier ones.
      await expect(store().appendEvents([events[3]!, events[4]!, events[0]!])).rejects.toThrow();
      expect(await store().listEvents(c.id, { afterSeq: 3, limit: 1 })).toEqual([events[5]]); // a page after a gap
      await store().appendEvents([events[3]!, events[4]!]); // the gap 4–5
      await store().appendEvents([events[6]!, events[7]!]);
      expect(await store().listEvents(c.id)).toEqual(events);
      expect(await store().listEvents(c.id, { afterSeq: 1, limit: 5 })).toEqual(events.slice(1, 6));
      expect(await store().listEvents(c.id, { afterSeq: 4, limit: 0 })).toEqual([]);
    });

    it('lists from a cursor at the end of a page, with pages of one event', async () => {
      const { c } = await setup();
      const events = [1, 2, 3, 4, 5].map((seq) => event(c.id, seq));
      for (const one of events) await store().appendEvents([one]);
      expect(await store().listEvents(c.id, { afterSeq: 2, limit: 1 })).toEqual([events[2]]);
      expect(await store().listEvents(c.id, { afterSeq: 2, limit: 2 })).toEqual(events.slice(2, 4));
      expect(await store().listEvents(c.id, { afterSeq: 4 })).toEqual([events[4]]);
    });

    it('lists a run longer than one page, from any cursor', async () => {
      const { c } = await setup();
      const events = Array.from({ length: 600 }, (_, index) => event(c.id, index + 1, { turnNo: 1 + (index >> 4) }));
      await store().appendEvents(events);
      expect(await store().listEvents(c.id)).toEqual(events);
      expect(await store().listEvents(c.id, { afterSeq: 255, limit: 3 })).toEqual(events.slice(255, 258));
      expect(await store().listEvents(c.id, { afterSeq: 590 })).toEqual(events.slice(590));
      expect(await store().eventRange(c.id)).toEqual({ first: 1, last: 600, lastTurnNo: 38, lastMessageSeq: null });
      expect(await store().pruneEvents(c.id, 300)).toBe(299);
      expect(await store().listEvents(c.id, { limit: 2 })).toEqual(events.slice(299, 301));
    });

    it('prunes the oldest events and reports the retained range', async () => {
      const { c } = await setup();
      await store().appendEvents([1, 2, 3, 4].map((seq) => event(c.id, seq, { turnNo: seq })));
      expect(await store().pruneEvents(c.id, 3)).toBe(2);
      expect(await store().eventRange(c.id)).toEqual({ first: 3, last: 4, lastTurnNo: 4, lastMessageSeq: null });
      expect(await store().eventRange('nobody')).toBeUndefined();
    });

    it('goes with its participant', async () => {
      const { p, c } = await setup();
      await store().appendEvents([event(c.id, 1)]);
      await store().deleteParticipant(p.id);
      expect(await store().listEvents(c.id)).toEqual([]);
    });
  });

  describe('event followers', () => {
    it('says whether another process follows a conversation, until its row lapses', async () => {
      const { p, c } = await setup();
      const other = await setup();
      await store().followEvents([c.id, 'no-such-conversation'], 'process-a', at(100));
      expect(await store().followedElsewhere(c.id, 'process-b', at(99))).toBe(true);
      expect(await store().followedElsewhere(c.id, 'process-a', at(99))).toBe(false); // only itself
      expect(await store().followedElsewhere(other.c.id, 'process-b', at(99))).toBe(false);
      expect(await store().followedElsewhere(c.id, 'process-b', at(100))).toBe(false); // lapsed
      await store().followEvents([c.id], 'process-a', at(200)); // renewed
      expect(await store().transaction((tx) => tx.followedElsewhere(c.id, 'process-b', at(150)))).toBe(true);
      await store().unfollowEvents(c.id, 'process-a');
      expect(await store().followedElsewhere(c.id, 'process-b', at(150))).toBe(false);
      await store().followEvents([c.id], 'process-a', at(200));
      await store().deleteParticipant(p.id);
      await store().followEvents([c.id], 'process-a', at(300)); // gone: nothing to follow
      expect(await store().followedElsewhere(c.id, 'process-b', at(150))).toBe(false);
    });

    it('waits for a commit that holds the conversation, then is seen by the next (PostgreSQL)', async () => {
      if (store().dialect !== 'postgres') return; // SQLite: one process, no fan-out
      const { c } = await setup();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const writer = store().transaction(async (tx) => {
        await tx.appendMessages([{ ...message(c.id), text: 'a turn commit' }]); // locks the conversation first
        await tx.getConversation(c.id); // answered: the lock is held
        await held;
        return tx.followedElsewhere(c.id, 'process-a', at(50));
      });
      let followed = false;
      const following = store()
        .followEvents([c.id], 'process-b', at(100))
        .then(() => (followed = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(followed).toBe(false); // behind the turn's lock: it will read the turn's events after
      release();
      expect(await writer).toBe(false); // asked before the follower was there
      await following;
      await store().transaction(async (tx) => {
        await tx.appendMessages([{ ...message(c.id), text: 'the next commit' }]);
        expect(await tx.followedElsewhere(c.id, 'process-a', at(50))).toBe(true);
      });
    });
  });
}
