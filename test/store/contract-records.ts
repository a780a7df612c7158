import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.ts';
import { emptyProfile, type Profile } from '../../src/core/profile.ts';
import type { SqlDialect } from '../../src/store/query-context.ts';
import type { Store } from '../../src/store/store.ts';
import type { InboxItem } from '../../src/core/domain.ts';
import { waitFor } from '../kit/wait-for.ts';
import type { StoreBackend } from './store-contract.ts';
import { coachingColumns, coachingQueries, coachingStateOf } from '../../src/flows/habit-coach/coaching-queries.ts';
import {
  at,
  conversation,
  inboxItem,
  message,
  outboxItem,
  participant,
  phone,
  schedule,
  T0,
  timer,
  toolCall,
  turn,
} from './store-fixtures.ts';

/** Participants, conversations, messages, profiles, schedules, and deleting a participant. */
export function recordsContract(store: () => Store, backend: Pick<StoreBackend, 'lockWaiters'>): void {
  describe('participants', () => {
    it('a locked participant waits for another status writer, but never for inserts that reference it', async () => {
      const p = participant();
      await store().insertParticipant(p);
      const c = conversation(p.id);
      await store().insertConversation(c);
      if (store().dialect === 'sqlite') {
        // One connection, exclusive transactions: the lock is the transaction itself.
        expect(await store().transaction((tx) => tx.lockParticipant(p.id))).toEqual(p);
        return;
      }
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = store().transaction(async (tx) => {
        await tx.lockParticipant(p.id);
        locked();
        await held;
      });
      await isLocked;
      await store().scheduleTimer(timer(c.id, p.id)); // a foreign-key insert: not blocked
      let second = false;
      const writer = store().transaction(async (tx) => {
        await tx.lockParticipant(p.id);
        second = true;
      });
      // Until its lock statement provably waits (or, wrongly, went through): no sleep to guess by.
      const waiting = async () => (await backend.lockWaiters?.('participants')) ?? 0;
      await waitFor(async () => second || (await waiting()) > 0, { what: 'the second writer waiting for the lock' });
      expect(second).toBe(false);
      release();
      await Promise.all([holder, writer]);
      expect(second).toBe(true);
    });

    it('round-trips every field', async () => {
      const p = participant({ debug: true, ethnicity: 'x', enrolledAt: at(1), createdAt: at(2), updatedAt: at(3) });
      await store().insertParticipant(p);
      expect(await store().getParticipant(p.id)).toEqual(p);
      expect(await store().findParticipantByPhone(p.phoneNumber)).toEqual(p);
      expect(await store().getParticipant('nobody')).toBeUndefined();
      expect(await store().findParticipantByPhone('+19999999999')).toBeUndefined();
    });

    it('rejects a taken phone number with participant_exists', async () => {
      const first = participant();
      await store().insertParticipant(first);
      const error = await store()
        .insertParticipant(participant({ phoneNumber: first.phoneNumber }))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ code: 'participant_exists', fault: 'user' });
      expect(await store().listParticipants()).toEqual([first]);
    });

    it('lets exactly one of 10 concurrent inserts of one phone number succeed', async () => {
      const number = phone();
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, () => store().insertParticipant(participant({ phoneNumber: number }))),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results.filter((r) => r.status === 'rejected'))
        expect(r.reason).toMatchObject({ code: 'participant_exists' });
      expect(await store().listParticipants()).toHaveLength(1);
    });

    it('lists by enrollment time with status filter, limit and offset', async () => {
      const late = participant({ enrolledAt: at(3000) });
      const early = participant({ enrolledAt: at(1000), status: 'paused' });
      const middle = participant({ enrolledAt: at(2000) });
      for (const p of [late, early, middle]) await store().insertParticipant(p);
      const ids = (list: { id: string }[]) => list.map((p) => p.id);
      expect(ids(await store().listParticipants())).toEqual([early.id, middle.id, late.id]);
      expect(ids(await store().listParticipants({ status: 'active' }))).toEqual([middle.id, late.id]);
      expect(ids(await store().listParticipants({ status: 'withdrawn' }))).toEqual([]);
      expect(ids(await store().listParticipants({ limit: 2 }))).toEqual([early.id, middle.id]);
      expect(ids(await store().listParticipants({ limit: 1, offset: 1 }))).toEqual([middle.id]);
      expect(ids(await store().listParticipants({ offset: 2 }))).toEqual([late.id]);
      expect(await store().countParticipants()).toBe(3);
      expect(await store().countParticipants({ status: 'active' })).toBe(2);
      expect(await store().countParticipants({ status: 'withdrawn' })).toBe(0);
    });

    it('updates a patch and the update time, leaving other fields alone', async () => {
      const p = participant();
      await store().insertParticipant(p);
      const updated = await store().updateParticipant(
        p.id,
        { name: 'Grace', timezone: null, status: 'paused', debug: true },
        at(5000),
      );
      const expected = { ...p, name: 'Grace', timezone: null, status: 'paused', debug: true, updatedAt: at(5000) };
      expect(updated).toEqual(expected);
      expect(await store().getParticipant(p.id)).toEqual(expected);
      expect(await store().updateParticipant('nobody', { name: 'x' }, at(1))).toBeUndefined();
    });
  });

  describe('conversations', () => {
    it('reads what a turn starts from: the conversation, participant and last messages, no system notes', async () => {
      const p = participant({ name: 'Ada' });
      await store().insertParticipant(p);
      const c = conversation(p.id);
      const web = conversation(null, { flow: 'assistant', channel: 'web' });
      for (const x of [c, web]) await store().insertConversation(x);
      expect(await store().getTurnContext(c.id, 3)).toEqual({
        conversation: c,
        participant: p,
        history: [],
        lastSeq: 0,
      });
      const stored = await store().appendMessages([
        message(c.id, { text: 'one' }),
        message(c.id, { role: 'assistant', source: 'model', text: 'two', turnId: 'turn_1' }),
        message(c.id, { role: 'system', source: 'system', text: 'a note' }),
        message(c.id, {
          kind: 'poll',
          text: 'Did you do it?',
          poll: { question: 'Did you do it?', options: ['Done', 'Not yet'], firstNumber: 1 },
        }),
        message(c.id, { text: 'four "quoted" ünïcode' }),
        message(c.id, { role: 'system', source: 'system', text: 'the last, a note' }),
      ]);
      await store().appendMessages([message(web.id, { text: 'elsewhere' })]);
      expect(await store().getTurnContext(c.id, 3)).toEqual({
        conversation: c,
        participant: p,
        history: [stored[1], stored[3], stored[4]],
        lastSeq: 6, // the system note's: a turn numbers its messages after every message
      });
      expect((await store().getTurnContext(web.id, 50))?.participant).toBeNull();
      expect(await store().getTurnContext('c_missing', 5)).toBeUndefined();
    });

    it('leaves out a history the caller knows at the last seq, and reads it once anything was appended', async () => {
      const p = participant();
      await store().insertParticipant(p);
      const c = conversation(p.id);
      await store().insertConversation(c);
      const [first] = await store().appendMessages([message(c.id, { text: 'one' })]);
      expect(await store().getTurnContext(c.id, 5, [], 1)).toMatchObject({ history: null, lastSeq: 1 });
      expect((await store().getTurnContext(c.id, 5, [], 0))?.history).toEqual([first]);

      // A system note is not history, but the caller's copy is no longer known to be current.
      await store().appendMessages([message(c.id, { role: 'system', source: 'system', text: 'a note' })]);
      expect(await store().getTurnContext(c.id, 5, [], 1)).toMatchObject({ history: [first], lastSeq: 2 });
      expect(await store().getTurnContext(c.id, 5, [], 2)).toMatchObject({ history: null, lastSeq: 2 });
    });

    it('reads a conversation with its participant, and a sender with their conversation, in one read', async () => {
      const p = participant({ name: 'Ada', status: 'paused', debug: true, cohort: 'arm-B' });
      await store().insertParticipant(p);
      const c = conversation(p.id, { subState: 'FEEDBACK' });
      await store().insertConversation(c);
      const web = conversation(null, { flow: 'service-desk', channel: 'web' });
      await store().insertConversation(web);
      expect(await store().getConversationWithParticipant(c.id)).toEqual({ conversation: c, participant: p });
      expect(await store().getConversationWithParticipant(web.id)).toEqual({ conversation: web, participant: null });
      expect(await store().getConversationWithParticipant('c_missing')).toBeUndefined();
      expect(await store().findSenderByPhone(p.phoneNumber)).toEqual({ participant: p, conversation: c });
      expect(await store().findSenderByPhone('+14165550999')).toBeUndefined();
      const alone = participant();
      await store().insertParticipant(alone);
      expect(await store().findSenderByPhone(alone.phoneNumber)).toEqual({
        participant: alone,
        conversation: undefined,
      });
    });

    it('records a message for its sender only if they are who it was made for, else says who they are', async () => {
      const p = participant();
      await store().insertParticipant(p);
      const c = conversation(p.id, { channel: 'webhook', flow: 'habit-coach' });
      await store().insertConversation(c);
      const sender = { participant: p, conversation: c };
      const made = (overrides: Partial<InboxItem> = {}) =>
        inboxItem({ sender: p.phoneNumber, participantId: p.id, conversationId: c.id, ...overrides });
      const kept = async (item: InboxItem) => (await store().getInbox(item.id)) !== undefined;

      const first = made({ traceParent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
      expect(await store().recordForSender(p.phoneNumber, first, { flow: 'habit-coach' })).toEqual({
        recorded: { item: first, duplicate: false, behind: false },
      });
      expect(await store().getInbox(first.id)).toEqual(first);
      const second = made();
      expect(await store().recordForSender(p.phoneNumber, second, { flow: 'habit-coach', channel: 'webhook' })).toEqual(
        { recorded: { item: second, duplicate: false, behind: true } }, // the first one is still pending
      );
      // Delivered again (the same channel message id): nothing new, the first record comes back.
      const again = made({ id: 'in_again', channelMessageId: first.channelMessageId, text: 'hi again' });
      expect(await store().recordForSender(p.phoneNumber, again, { flow: 'habit-coach' })).toEqual({
        sender,
        recorded: { item: first, duplicate: true },
      });

      // The same inside a transaction other writes share (SQLite's group commit gathers it).
      const gathered = made();
      const inBatch = (item: InboxItem) =>
        store().batched((ops) => ops.recordForSender(p.phoneNumber, item, { flow: 'habit-coach' }), { gather: true });
      expect(await inBatch(gathered)).toEqual({ recorded: { item: gathered, duplicate: false, behind: true } });
      expect(await inBatch({ ...gathered, id: 'in_again_batched' })).toEqual({
        sender,
        recorded: { item: gathered, duplicate: true },
      });

      // Made for someone else, another conversation (a later one of theirs too: the oldest is the
      // sender's), flow or channel: the sender alone, nothing written.
      const later = conversation(p.id, {
        channel: 'webhook',
        flow: 'habit-coach',
        createdAt: new Date(c.createdAt.getTime() + 1),
      });
      await store().insertConversation(later);
      const misses: Array<[InboxItem, { flow: string; channel?: string }]> = [
        [made({ participantId: 'p_other' }), { flow: 'habit-coach' }],
        [made({ conversationId: 'c_other' }), { flow: 'habit-coach' }],
        [made({ conversationId: later.id }), { flow: 'habit-coach' }],
        [made(), { flow: 'assistant' }],
        [made(), { flow: 'habit-coach', channel: 'whatsapp' }],
      ];
      for (const [item, expected] of misses) {
        expect(await store().recordForSender(p.phoneNumber, item, expected)).toEqual({ sender });
        expect(await kept(item)).toBe(false);
      }
      const stranger = made({ sender: '+14165550999' });
      expect(await store().recordForSender('+14165550999', stranger, { flow: 'habit-coach' })).toEqual({
        sender: undefined,
      });
      expect(await kept(stranger)).toBe(false);

      // Paused since: the sender, who says so, and nothing written (the caller records it the long way).
      const paused = await store().updateParticipant(p.id, { status: 'paused' }, new Date(p.updatedAt.getTime() + 1));
      const whilePaused = made();
      expect(await store().recordForSender(p.phoneNumber, whilePaused, { flow: 'habit-coach' })).toEqual({
        sender: { participant: paused, conversation: c },
      });
      expect(await kept(whilePaused)).toBe(false);
    });

    it('round-trips, finds by participant, and compare-and-sets on version', async () => {
      const p = participant();
      await store().insertParticipant(p);
      const c = conversation(p.id, { subState: 'INTAKE' });
      await store().insertConversation(c);
      expect(await store().getConversation(c.id)).toEqual(c);
      expect(await store().findConversationByParticipant(p.id)).toEqual(c);
      expect(await store().findConversationByParticipant('nobody')).toBeUndefined();

      const updated = await store().updateConversation(c.id, 1, { subState: 'FEEDBACK' }, at(10));
      expect(updated).toEqual({ ...c, subState: 'FEEDBACK', version: 2, updatedAt: at(10) });
      // A writer still holding version 1 lost the race.
      expect(await store().updateConversation(c.id, 1, { state: 'OTHER' }, at(20))).toBeUndefined();
      expect(await store().getConversation(c.id)).toEqual(updated);
      expect(await store().updateConversation('nobody', 1, {}, at(20))).toBeUndefined();
      const cleared = await store().updateConversation(c.id, 2, { subState: null, state: 'DONE' }, at(30));
      expect(cleared).toMatchObject({ subState: null, state: 'DONE', version: 3 });
    });

    it('lets one of two concurrent writers with the same version win', async () => {
      const c = conversation(null, { channel: 'web', flow: 'assistant' });
      await store().insertConversation(c);
      const results = await Promise.all(
        [1, 2].map((i) => store().updateConversation(c.id, 1, { state: `S${i}` }, at(i))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await store().getConversation(c.id))!.version).toBe(2);
    });
  });

  describe('messages', () => {
    it('appends with gapless seqs and lists the last N in order', async () => {
      const c = conversation(null);
      await store().insertConversation(c);
      const poll = { question: 'Did you do it?', options: ['Done', 'Next time'] };
      const first = await store().appendMessages([
        message(c.id, { text: 'one' }),
        message(c.id, {
          text: 'two',
          role: 'assistant',
          source: 'model',
          kind: 'poll',
          poll,
          turnId: 'turn_1',
          createdAt: at(7),
        }),
      ]);
      expect(first.map((m) => m.seq)).toEqual([1, 2]);
      const second = await store().appendMessages([message(c.id, { text: 'three' })]);
      expect(second[0]!.seq).toBe(3);
      expect(await store().appendMessages([])).toEqual([]);

      const all = await store().listMessages(c.id);
      expect(all).toEqual([...first, ...second]);
      expect(all[1]!.poll).toEqual(poll);
      expect(all[1]!.createdAt).toEqual(at(7));
      expect((await store().listMessages(c.id, { limit: 2 })).map((m) => m.text)).toEqual(['two', 'three']);
      expect(await store().listMessages(c.id, { limit: 0 })).toEqual([]);
      expect(await store().listMessages('nobody')).toEqual([]);
      expect((await store().listMessages(c.id, { afterSeq: 1 })).map((m) => m.text)).toEqual(['two', 'three']);
      expect((await store().listMessages(c.id, { afterSeq: 1, limit: 1 })).map((m) => m.text)).toEqual(['three']);

      // System notes are left out before the limit counts, so they never crowd out the dialogue.
      await store().appendMessages([
        message(c.id, { text: 'note', role: 'system', source: 'system' }),
        message(c.id, { text: 'note 2', role: 'system', source: 'system' }),
      ]);
      expect((await store().listMessages(c.id, { limit: 2, withoutSystem: true })).map((m) => m.text)).toEqual([
        'two',
        'three',
      ]);
      expect((await store().listMessages(c.id, { limit: 2 })).map((m) => m.text)).toEqual(['note', 'note 2']);
    });

    it('numbers each conversation separately, also within one batch', async () => {
      const [a, b] = [conversation(null), conversation(null)];
      await store().insertConversation(a);
      await store().insertConversation(b);
      await store().appendMessages([message(a.id)]);
      const batch = await store().appendMessages([message(b.id), message(a.id), message(b.id)]);
      expect(batch.map((m) => [m.conversationId, m.seq])).toEqual([
        [b.id, 1],
        [a.id, 2],
        [b.id, 2],
      ]);
    });

    it('gives 20 concurrent appends to one conversation the seqs 1..20', async () => {
      const c = conversation(null);
      await store().insertConversation(c);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store().appendMessages([message(c.id, { text: `m${i}` })])),
      );
      expect(results.map((r) => r[0]!.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const listed = await store().listMessages(c.id);
      expect(listed.map((m) => m.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      // Each message got the seq the append reported.
      for (const [r] of results) expect(listed[r!.seq - 1]!.id).toBe(r!.id);
    });

    it('appends inside the caller transaction, undone by its rollback', async () => {
      const c = conversation(null);
      await store().insertConversation(c);
      await expect(
        store().transaction(async (tx) => {
          expect((await tx.appendMessages([message(c.id)]))[0]!.seq).toBe(1);
          expect((await tx.appendMessages([message(c.id)]))[0]!.seq).toBe(2);
          throw new Error('undo');
        }),
      ).rejects.toThrow('undo');
      expect(await store().listMessages(c.id)).toEqual([]);
      expect((await store().appendMessages([message(c.id)]))[0]!.seq).toBe(1);
    });
  });

  describe('profiles', () => {
    it('round-trips the whole profile and overwrites it on save', async () => {
      const p = participant();
      await store().insertParticipant(p);
      expect(await store().getProfile(p.id)).toBeUndefined();
      const profile: Profile = {
        participantId: p.id,
        fields: { habit_domain: 'walking', preferred_time: '08:00', additional_info: 'quote "this" \\ and ünïcode' },
        intensity: 'high',
        successCount: 3,
        totalPrompts: 7,
        tone: { scores: { warm: 0.75, brief: 0.1234 }, active: ['warm'], lastUpdatedAt: at(99) },
        fieldUpdatedAt: { habit_domain: at(1), intensity: at(2), tone: at(99) },
        lastHabitPrompt: 'Walk after lunch',
        lastPromptSentAt: at(500),
        updatedAt: at(600),
      };
      await store().saveProfile(profile);
      expect(await store().getProfile(p.id)).toEqual(profile);

      const next: Profile = {
        ...profile,
        fields: {},
        intensity: 'low',
        tone: { scores: {}, active: [], lastUpdatedAt: null },
        fieldUpdatedAt: {},
        lastHabitPrompt: null,
        lastPromptSentAt: null,
        updatedAt: at(700),
      };
      await store().saveProfile(next);
      expect(await store().getProfile(p.id)).toEqual(next);
    });
  });

  describe('schedules', () => {
    it('lists oldest first, per participant, and deletes', async () => {
      const [p, other] = [participant(), participant()];
      await store().insertParticipant(p);
      await store().insertParticipant(other);
      const later = schedule(p.id, { createdAt: at(2000) });
      const random = schedule(p.id, {
        kind: 'random',
        fixedTime: null,
        windowStart: '09:00',
        windowEnd: '11:30',
        createdAt: at(1000),
      });
      await store().insertSchedule(later);
      await store().insertSchedule(random);
      await store().insertSchedule(schedule(other.id));
      expect(await store().listSchedules(p.id)).toEqual([random, later]);
      expect(await store().deleteSchedule(random.id)).toBe(true);
      expect(await store().deleteSchedule(random.id)).toBe(false);
      expect(await store().listSchedules(p.id)).toEqual([later]);
      await store().setScheduleTimezone(later.id, 'Europe/Paris');
      expect(await store().listSchedules(p.id)).toEqual([{ ...later, timezone: 'Europe/Paris' }]);
    });
  });

  describe("the habit coach's turn reads (its store extension)", () => {
    it('reads the profile, the schedules oldest first and the pending timers, of this participant only', async () => {
      const [p, other] = [participant(), participant()];
      const c = conversation(p.id);
      for (const someone of [p, other]) await store().insertParticipant(someone);
      await store().insertConversation(c);
      const { coachingState } = store().extend(coachingQueries).ops;
      expect(await coachingState(p.id)).toEqual({ profile: undefined, schedules: [], pendingTimers: new Map() });

      const profile: Profile = {
        ...emptyProfile(p.id, at(5)),
        fields: { habit_domain: 'walking', additional_info: 'quote "this" \\ and ünïcode' },
        tone: { scores: { warm: 0.75 }, active: ['warm'], lastUpdatedAt: at(99) },
        fieldUpdatedAt: { habit_domain: at(1) },
        lastHabitPrompt: 'Walk after lunch',
        lastPromptSentAt: at(500),
      };
      await store().saveProfile(profile);
      const later = schedule(p.id, { createdAt: at(2000) });
      const earlier = schedule(p.id, { kind: 'random', fixedTime: null, windowStart: '09:00', windowEnd: '11:30' });
      for (const s of [later, earlier, schedule(other.id)]) await store().insertSchedule(s);
      const armed = timer(c.id, p.id, { dedupKey: `daily-prompt:${later.id}`, dueAt: at(86_400_000) });
      const cancelled = timer(c.id, p.id, { dedupKey: 'cancelled-one' });
      for (const t of [armed, cancelled]) await store().scheduleTimer(t);
      await store().cancelTimer(cancelled.dedupKey, at(1));

      const expected = {
        profile,
        schedules: [earlier, later],
        pendingTimers: new Map([[armed.dedupKey, armed.dueAt]]),
      };
      expect(await coachingState(p.id)).toEqual(expected);
      expect((await coachingState(other.id)).schedules).toHaveLength(1);

      // The same, read with the turn's context (Flow.contextRead): for the flow's conversations only.
      const reads = [
        // Fails the statement if evaluated: another flow's columns must not run for this conversation.
        {
          flow: 'echo',
          columns: (dialect: SqlDialect, id: unknown) => ({
            never:
              dialect === 'postgres'
                ? sql`(select (coalesce(x.name, '') || 'not json')::json from participants x where x.id = ${id})`
                : sql`(select json(coalesce(x.name, '') || 'not json') from participants x where x.id = ${id})`,
          }),
        },
        { flow: c.flow, columns: coachingColumns },
      ];
      const context = await store().getTurnContext(c.id, 5, reads);
      expect(coachingStateOf(context!.flowColumns!)).toEqual(expected);
      expect(Object.keys(context!.flowColumns!).sort()).toEqual(['profile', 'schedules', 'timers']);
      const web = conversation(null, { flow: 'service-desk', channel: 'web' });
      await store().insertConversation(web);
      expect((await store().getTurnContext(web.id, 5, reads))?.flowColumns).toBeUndefined();
      expect((await store().getTurnContext(c.id, 5))?.flowColumns).toBeUndefined();
    });
  });

  describe('deleteParticipant', () => {
    it('removes the participant and everything of theirs, and nothing else', async () => {
      const seed = async () => {
        const p = participant();
        const c = conversation(p.id);
        await store().insertParticipant(p);
        await store().insertConversation(c);
        await store().appendMessages([message(c.id), message(c.id)]);
        await store().saveProfile(emptyProfile(p.id, T0));
        const s = schedule(p.id);
        await store().insertSchedule(s);
        const t = timer(c.id, p.id);
        await store().scheduleTimer(t);
        const byParticipant = inboxItem({ participantId: p.id, conversationId: c.id });
        const byConversation = inboxItem({ participantId: null, conversationId: c.id });
        // Theirs outside any conversation: it goes with them, not with a conversation.
        const alone = inboxItem({ participantId: p.id, conversationId: null });
        // Their number's message from before they were enrolled, kept as an unknown sender's.
        const before = inboxItem({ sender: p.phoneNumber, status: 'ignored' });
        await store().insertInbox(byParticipant);
        await store().insertInbox(byConversation);
        await store().insertInbox(alone);
        await store().insertInbox(before);
        const out = outboxItem(c.id, { participantId: p.id });
        await store().enqueueOutbox([out]);
        const tr = turn(c.id);
        await store().insertTurn(tr);
        await store().insertToolCalls([toolCall(c.id, tr.id)]);
        return { p, c, s, t, inbox: [byParticipant, byConversation, alone, before], out };
      };
      const doomed = await seed();
      const kept = await seed();

      expect(await store().deleteParticipant(doomed.p.id)).toBe(true);
      expect(await store().deleteParticipant(doomed.p.id)).toBe(false);

      const gone = doomed;
      expect(await store().getParticipant(gone.p.id)).toBeUndefined();
      expect(await store().findParticipantByPhone(gone.p.phoneNumber)).toBeUndefined();
      expect(await store().getConversation(gone.c.id)).toBeUndefined();
      expect(await store().findConversationByParticipant(gone.p.id)).toBeUndefined();
      expect(await store().listMessages(gone.c.id)).toEqual([]);
      expect(await store().getProfile(gone.p.id)).toBeUndefined();
      expect(await store().listSchedules(gone.p.id)).toEqual([]);
      expect(await store().getTimer(gone.t.id)).toBeUndefined();
      for (const item of gone.inbox) expect(await store().getInbox(item.id)).toBeUndefined();
      expect(await store().getOutbox(gone.out.id)).toBeUndefined();
      expect(await store().listTurns(gone.c.id)).toEqual([]);
      expect(await store().listToolCalls(gone.c.id)).toEqual([]);
      expect(await store().listPendingInbox()).toHaveLength(3);
      for (const item of kept.inbox) expect(await store().getInbox(item.id)).toBeDefined();

      expect(await store().getParticipant(kept.p.id)).toEqual(kept.p);
      expect(await store().listMessages(kept.c.id)).toHaveLength(2);
      expect(await store().getProfile(kept.p.id)).toBeDefined();
      expect(await store().listSchedules(kept.p.id)).toHaveLength(1);
      expect(await store().getTimer(kept.t.id)).toBeDefined();
      expect(await store().getOutbox(kept.out.id)).toBeDefined();
      expect(await store().listTurns(kept.c.id)).toHaveLength(1);
      expect(await store().listToolCalls(kept.c.id)).toHaveLength(1);
      // The phone number can be enrolled again.
      await store().insertParticipant(participant({ phoneNumber: gone.p.phoneNumber }));
      // Another number's message from before enrolment stays when a participant goes.
      const stranger = inboxItem({ sender: '+14165550999', status: 'ignored' });
      await store().insertInbox(stranger);
      expect(await store().deleteParticipant(kept.p.id)).toBe(true);
      expect(await store().getInbox(stranger.id)).toBeDefined();
    });
  });
}
