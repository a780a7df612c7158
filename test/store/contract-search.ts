import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.ts';
import { at, conversation, message, participant, participantWithConversation, uid } from './store-fixtures.ts';

const HOUR = 3_600_000;

/** Transcript search (stemmed, any word, time bounds before the limit) and the assistant's notes (decision 006). */
export function searchContract(store: () => Store): void {
  describe('transcript search and notes', () => {
    const transcript = async () => {
      const { c } = await participantWithConversation(store());
      const other = await participantWithConversation(store());
      await store().appendMessages([
        message(c.id, { text: 'My dentist appointment is on Friday', createdAt: at(0) }),
        message(c.id, {
          role: 'assistant',
          source: 'model',
          text: 'Noted: the dentist on Friday.',
          createdAt: at(1 * HOUR),
        }),
        message(c.id, { text: 'Remind me to buy oat milk', createdAt: at(2 * HOUR) }),
        message(c.id, { role: 'system', source: 'system', text: 'debug: dentist', createdAt: at(3 * HOUR) }),
        message(c.id, { text: 'Cancel the dentist, I will call them', createdAt: at(4 * HOUR) }),
      ]);
      await store().appendMessages([message(other.c.id, { text: 'my dentist is great', createdAt: at(0) })]);
      return c.id;
    };

    it("finds this conversation's user and assistant messages by any word, stemmed, never system notes or other conversations", async () => {
      const id = await transcript();
      const found = await store().searchMessages(id, { keywords: ['dentists'], limit: 10 });
      expect(found.map((m) => m.seq).sort()).toEqual([1, 2, 5]);
      expect(
        (await store().searchMessages(id, { keywords: ['oat milk', 'nothing-like-this'], limit: 10 })).map(
          (m) => m.text,
        ),
      ).toEqual(['Remind me to buy oat milk']);
      expect(await store().searchMessages(id, { keywords: ['"; drop table messages; --', '***'], limit: 10 })).toEqual(
        [],
      );
      expect(await store().searchMessages(id, { keywords: [], limit: 10 })).toEqual([]);
    });

    it('finds nothing in a conversation whose flow does not search its transcript (it is not indexed)', async () => {
      const p = participant();
      const c = conversation(p.id);
      await store().insertParticipant(p);
      await store().insertConversation(c, { transcriptSearch: false });
      await store().appendMessages([message(c.id, { text: 'My dentist appointment is on Friday', createdAt: at(0) })]);
      expect(await store().searchMessages(c.id, { keywords: ['dentist'], limit: 10 })).toEqual([]);
      expect((await store().listMessages(c.id)).map((m) => m.text)).toEqual(['My dentist appointment is on Friday']);
    });

    it('finds words whose letters carry combining marks (Hindi, vowelled Arabic)', async () => {
      const { c } = await participantWithConversation(store());
      await store().appendMessages([
        message(c.id, { text: 'नमस्ते दोस्त, कल मिलते हैं', createdAt: at(0) }),
        message(c.id, { text: 'unrelated', createdAt: at(1) }),
      ]);
      expect((await store().searchMessages(c.id, { keywords: ['नमस्ते'], limit: 10 })).map((m) => m.seq)).toEqual([1]);
    });

    it('applies the time bounds before the limit', async () => {
      const id = await transcript();
      const late = await store().searchMessages(id, { keywords: ['dentist'], from: at(3 * HOUR), limit: 1 });
      expect(late.map((m) => m.seq)).toEqual([5]);
      const early = await store().searchMessages(id, { keywords: ['dentist'], to: at(1 * HOUR), limit: 5 });
      expect(early.map((m) => m.seq).sort()).toEqual([1, 2]);
      // The newest match (seq 5) would come first; with the bound applied after the limit nothing would be left.
      const earliest = await store().searchMessages(id, { keywords: ['dentist'], to: at(1 * HOUR), limit: 1 });
      expect(earliest).toHaveLength(1);
      expect([1, 2]).toContain(earliest[0]!.seq);
      expect(await store().searchMessages(id, { keywords: ['dentist'], from: at(5 * HOUR), limit: 5 })).toEqual([]);
      expect(await store().searchMessages(id, { keywords: ['dentist'], limit: 2 })).toHaveLength(2);
    });

    it('keeps notes per conversation, oldest first, and deletes only its own', async () => {
      const { c } = await participantWithConversation(store());
      const other = await participantWithConversation(store());
      const first = { id: uid('note'), conversationId: c.id, text: 'buy oat milk', createdAt: at(0) };
      const second = { id: uid('note'), conversationId: c.id, text: 'call the dentist', createdAt: at(HOUR) };
      await store().addNote(second);
      await store().addNote(first);
      expect(await store().listNotes(c.id)).toEqual([first, second]);
      expect(await store().deleteNote(other.c.id, first.id)).toBe(false);
      expect(await store().deleteNote(c.id, first.id)).toBe(true);
      expect(await store().deleteNote(c.id, first.id)).toBe(false);
      expect(await store().listNotes(c.id)).toEqual([second]);
    });
  });
}
