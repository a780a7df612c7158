import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.ts';
import { at, conversation, message, participant, participantWithConversation, uid } from './store-fixtures.ts';

const HOUR = 3_600_000;
/** One conversation's memory, nobody known. */
const only = (conversationId: string) => ({ conversationId, person: null });

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

    it("finds this conversation's own user and assistant messages by any stemmed word; no system notes", async () => {
      const id = await transcript();
      const found = await store().searchMessages(only(id), { keywords: ['dentists'], limit: 10 });
      expect(found.map((m) => m.seq).sort()).toEqual([1, 2, 5]);
      expect(
        (await store().searchMessages(only(id), { keywords: ['oat milk', 'nothing-like-this'], limit: 10 })).map(
          (m) => m.text,
        ),
      ).toEqual(['Remind me to buy oat milk']);
      expect(
        await store().searchMessages(only(id), { keywords: ['"; drop table messages; --', '***'], limit: 10 }),
      ).toEqual([]);
      expect(await store().searchMessages(only(id), { keywords: [], limit: 10 })).toEqual([]);
    });

    it('finds nothing in a conversation whose flow does not search its transcript (it is not indexed)', async () => {
      const p = participant();
      const c = conversation(p.id);
      await store().insertParticipant(p);
      await store().insertConversation(c, { transcriptSearch: false });
      await store().appendMessages([message(c.id, { text: 'My dentist appointment is on Friday', createdAt: at(0) })]);
      expect(await store().searchMessages(only(c.id), { keywords: ['dentist'], limit: 10 })).toEqual([]);
      expect((await store().listMessages(c.id)).map((m) => m.text)).toEqual(['My dentist appointment is on Friday']);
    });

    it('finds words whose letters carry combining marks (Hindi, vowelled Arabic)', async () => {
      const { c } = await participantWithConversation(store());
      await store().appendMessages([
        message(c.id, { text: 'नमस्ते दोस्त, कल मिलते हैं', createdAt: at(0) }),
        message(c.id, { text: 'unrelated', createdAt: at(1) }),
      ]);
      const found = await store().searchMessages(only(c.id), { keywords: ['नमस्ते'], limit: 10 });
      expect(found.map((m) => m.seq)).toEqual([1]);
    });

    it('applies the time bounds before the limit', async () => {
      const id = await transcript();
      const late = await store().searchMessages(only(id), { keywords: ['dentist'], from: at(3 * HOUR), limit: 1 });
      expect(late.map((m) => m.seq)).toEqual([5]);
      const early = await store().searchMessages(only(id), { keywords: ['dentist'], to: at(1 * HOUR), limit: 5 });
      expect(early.map((m) => m.seq).sort()).toEqual([1, 2]);
      // The newest match (seq 5) would come first; with the bound applied after the limit nothing would be left.
      const earliest = await store().searchMessages(only(id), { keywords: ['dentist'], to: at(1 * HOUR), limit: 1 });
      expect(earliest).toHaveLength(1);
      expect([1, 2]).toContain(earliest[0]!.seq);
      expect(await store().searchMessages(only(id), { keywords: ['dentist'], from: at(5 * HOUR), limit: 5 })).toEqual(
        [],
      );
      expect(await store().searchMessages(only(id), { keywords: ['dentist'], limit: 2 })).toHaveLength(2);
    });

    it('keeps notes per conversation when nobody is known, oldest first, and deletes only its own', async () => {
      const { c } = await participantWithConversation(store());
      const other = await participantWithConversation(store());
      const first = { id: uid('note'), conversationId: c.id, person: null, text: 'buy oat milk', createdAt: at(0) };
      const second = {
        id: uid('note'),
        conversationId: c.id,
        person: null,
        text: 'call the dentist',
        createdAt: at(HOUR),
      };
      await store().addNote(second);
      await store().addNote(first);
      expect(await store().listNotes(only(c.id))).toEqual([first, second]);
      expect(await store().deleteNote(only(other.c.id), first.id)).toBe(false);
      expect(await store().deleteNote(only(c.id), first.id)).toBe(true);
      expect(await store().deleteNote(only(c.id), first.id)).toBe(false);
      expect(await store().listNotes(only(c.id))).toEqual([second]);
    });

    it("keeps a person's notes across their conversations; another person's are not theirs", async () => {
      const a = conversation(null);
      const b = conversation(null);
      await store().insertConversation(a);
      await store().insertConversation(b);
      const note = { id: uid('note'), conversationId: a.id, person: 'id:user-42', text: 'oat milk', createdAt: at(0) };
      await store().addNote(note);
      expect(await store().listNotes({ conversationId: b.id, person: 'id:user-42' })).toEqual([note]);
      expect(await store().listNotes({ conversationId: a.id, person: 'id:user-7' })).toEqual([]);
      expect(await store().listNotes(only(a.id))).toEqual([]);
      expect(await store().deleteNote({ conversationId: a.id, person: 'id:user-7' }, note.id)).toBe(false);
      expect(await store().deleteNote({ conversationId: b.id, person: 'id:user-42' }, note.id)).toBe(true);
    });

    /**
     * A participant's own conversation and a web session for them, a habit conversation (not searched) and a
     * stranger's.
     */
    const personWithConversations = async () => {
      const { p, c } = await participantWithConversation(store());
      const habit = conversation(p.id);
      await store().insertConversation(habit, { transcriptSearch: false });
      const web = conversation(null, { channel: 'web', flow: 'assistant' });
      await store().insertConversation(web);
      await store().saveSessionCaller(web.id, { phone: null, person: p.id }, at(0));
      const stranger = conversation(null, { channel: 'web', flow: 'assistant' });
      await store().insertConversation(stranger);
      await store().appendMessages([message(c.id, { text: 'My dentist is Dr Ortiz', createdAt: at(0) })]);
      await store().appendMessages([message(habit.id, { text: 'I walked to the dentist', createdAt: at(1) })]);
      await store().appendMessages([message(web.id, { text: 'Dentist moved to Tuesday', createdAt: at(2) })]);
      await store().appendMessages([message(stranger.id, { text: 'my dentist is far', createdAt: at(3) })]);
      return { p, c, web, habit, stranger, scope: { conversationId: web.id, person: p.id } };
    };

    it("searches every conversation of the person that searches its transcript, and nobody else's", async () => {
      const { c, web, scope } = await personWithConversations();
      const found = await store().searchMessages(scope, { keywords: ['dentist'], limit: 10 });
      expect(found.map((m) => [m.conversationId, m.text]).sort()).toEqual(
        [
          [c.id, 'My dentist is Dr Ortiz'],
          [web.id, 'Dentist moved to Tuesday'],
        ].sort(),
      );
      expect(
        (await store().searchMessages(only(web.id), { keywords: ['dentist'], limit: 10 })).map((m) => m.text),
      ).toEqual(['Dentist moved to Tuesday']);
    });

    it("forgets a deleted participant's memory: the web sessions started for them and their notes", async () => {
      const { p, c, web, habit, stranger, scope } = await personWithConversations();
      await store().addNote({ id: uid('note'), conversationId: web.id, person: p.id, text: 'x', createdAt: at(0) });
      expect(await store().conversationsOfParticipant(p.id)).toEqual([c.id, habit.id, web.id].sort());
      expect(await store().deleteParticipant(p.id)).toBe(true);
      expect(await store().listNotes(scope)).toEqual([]);
      expect(await store().getConversation(web.id)).toBeUndefined();
      expect(await store().getSessionCaller(web.id)).toBeUndefined();
      expect(await store().searchMessages(only(web.id), { keywords: ['dentist'], limit: 10 })).toEqual([]);
      // Nobody else's session goes.
      expect((await store().listMessages(stranger.id)).map((m) => m.text)).toEqual(['my dentist is far']);
      expect(await store().deleteParticipant(p.id)).toBe(false);
      expect(await store().conversationsOfParticipant(p.id)).toEqual([]);
    });

    it('finds what a model has yet to embed, keeps embeddings exactly, per model, and lists them by time', async () => {
      const { c, web, scope } = await personWithConversations();
      const missing = await store().messagesWithoutEmbedding(scope, 'm1', 10);
      expect(missing.map((m) => m.text)).toEqual(['Dentist moved to Tuesday', 'My dentist is Dr Ortiz']);
      const vector = Float32Array.from([0.1, -2.5, 3.75, 1e-8]);
      await store().saveEmbeddings('m1', [{ conversationId: web.id, seq: 1, vector }], at(5));
      // A second save of the same message keeps the first.
      await store().saveEmbeddings('m1', [{ conversationId: web.id, seq: 1, vector: Float32Array.from([9]) }], at(6));
      await store().transaction((tx) =>
        tx.saveEmbeddings('m1', [{ conversationId: c.id, seq: 1, vector: Float32Array.from([1, 0, 0, 0]) }], at(6)),
      );
      expect(await store().messagesWithoutEmbedding(scope, 'm1', 10)).toEqual([]);
      expect(await store().messagesWithoutEmbedding(scope, 'm2', 1)).toHaveLength(1);
      const listed = await store().listEmbeddings(scope, 'm1', { limit: 10 });
      expect(listed.map((entry) => entry.message.text)).toEqual(['Dentist moved to Tuesday', 'My dentist is Dr Ortiz']);
      expect(listed[0]!.vector).toEqual(vector);
      expect((await store().listEmbeddings(scope, 'm1', { to: at(1), limit: 10 })).map((e) => e.message.text)).toEqual([
        'My dentist is Dr Ortiz',
      ]);
      expect(await store().listEmbeddings(scope, 'm2', { limit: 10 })).toEqual([]);
      expect(await store().listEmbeddings(only(c.id), 'm1', { limit: 1 })).toHaveLength(1);
    });
  });
}
