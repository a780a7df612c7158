// @requires postgres
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REMINDER_TEXT } from '../../src/flows/habit-coach/timers/follow-up-timers.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { ChildServer } from '../kit/child-server.ts';
import { EventClient } from '../kit/event-client.ts';
import { lastUserText, startFakeOpenAiServer, type FakeOpenAiServer } from '../kit/fake-openai-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { WebhookSink } from '../kit/webhook-sink.ts';
import { PG_URL } from '../kit/requirements.ts';
import { seededRandom } from '../kit/seeded-random.ts';

// Issue #8's acceptance test: three real server processes on one PostgreSQL schema, a shared
// OpenAI-compatible fake that echoes, and one webhook receiving every reply. Runs in ~1 min.
const SCHEMA = `scale_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const PARTICIPANTS = 50;
const MESSAGES_EACH = 20;
const TIMERS = 500;

let model: FakeOpenAiServer;
let sink: WebhookSink;
let servers: ChildServer[] = [];
let store: Store;

beforeAll(async () => {
  model = await startFakeOpenAiServer((body) => ({ text: `echo: ${lastUserText(body)}`, chunkSize: 8 }));
  sink = await new WebhookSink().start();
  // Started together on an empty schema: the migrations must still run exactly once.
  servers = await Promise.all(
    ['A', 'B', 'C'].map(() =>
      ChildServer.start({
        DATABASE_URL: PG_URL,
        DATABASE_SCHEMA: SCHEMA,
        LLM_BASE_URL: model.baseUrl,
        LLM_MAX_RETRIES: '0',
        OUTBOUND_WEBHOOK_URL: sink.url,
      }),
    ),
  );
  store = await openStore(PG_URL, { schema: SCHEMA });
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await store?.close();
  await sink?.close();
  await model?.close();
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`drop schema if exists "${SCHEMA}" cascade`);
  await admin.end();
});

const alive = () => servers.filter((server) => !server.exit);
const random = seededRandom();
const anyServer = () => alive()[Math.floor(random() * alive().length)]!;
const phoneOf = (i: number) => `+1416555${String(1000 + i).padStart(4, '0')}`;
const echoes = () =>
  [...sink.accepted.values()]
    .map((delivery) => String(delivery.body.text))
    .filter((text) => text.startsWith('echo: p'));

/** Sends one inbound message like a provider would: to any live process, again elsewhere if that one is gone. */
async function deliver(from: string, text: string, messageId: string): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const server = anyServer();
    try {
      const response = await server.request('POST', '/conversation/inbound', { from, text, message_id: messageId });
      if (response.status === 202) return;
    } catch {
      // The process died under us: the provider retries, elsewhere.
    }
  }
  throw new Error(`could not deliver ${messageId}`);
}

describe('three processes on one PostgreSQL database', () => {
  it('migrated once, though all three started at the same time', async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    const { rows } = await admin.query(`select name from "${SCHEMA}".migrations order by name`);
    await admin.end();
    expect(rows.map((row) => row.name)).toEqual([...new Set(rows.map((row) => row.name))]);
    expect(rows.length).toBeGreaterThanOrEqual(4);
  });

  it('a WebSocket on one process sees, live and in order, the turn another process ran', async () => {
    const [a, b] = servers as [ChildServer, ChildServer];
    const phone = phoneOf(999);
    const created = await b.request('POST', '/conversation/participants', { phone_number: phone });
    await waitFor(() => [...sink.accepted.values()].some((delivery) => delivery.body.to === phone), {
      what: 'greeting',
    });
    const client = await EventClient.connect(a.url, created.body.result.id);
    await waitFor(() => client.of('resync').length === 1, { what: 'resync' });
    expect(
      (await b.request('POST', '/conversation/inbound', { from: phone, text: 'across processes', message_id: 'x1' }))
        .status,
    ).toBe(202);
    await waitFor(
      () => client.of('final').some((event) => 'text' in event && event.text === 'echo: across processes'),
      { what: 'final on the other process', timeoutMs: 10_000 },
    );
    const seqs = client.events.map((event) => event.seq);
    expect(seqs.slice(1)).toEqual(seqs.slice(1).map((_, index) => seqs[1]! + index)); // gapless after the resync
    expect(client.of('token').length).toBeGreaterThan(0);
    client.close();
  }, 30_000);

  const traffic = `${PARTICIPANTS} participants × ${MESSAGES_EACH} messages to random processes, duplicates`;
  it(`${traffic}, ${TIMERS} timers, one process SIGKILLed: everything once, in order`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < PARTICIPANTS; i++) {
      const created = await anyServer().request('POST', '/conversation/participants', {
        phone_number: phoneOf(i),
        timezone: 'America/Toronto',
      });
      expect(created.status).toBe(201);
      ids.push(created.body.result.id);
    }
    // 500 reminders due over the next 10 s (database time), ten per participant.
    const now = (await store.databaseNow()).getTime();
    for (let t = 0; t < TIMERS; t++) {
      const participantId = ids[t % PARTICIPANTS]!;
      const conversation = (await store.findConversationByParticipant(participantId))!;
      await store.scheduleTimer({
        id: `tmr_scale_${t}`,
        kind: 'reminder',
        conversationId: conversation.id,
        participantId,
        dedupKey: `reminder:scale:${t}`,
        dueAt: new Date(now + 1000 + (t * 10_000) / TIMERS),
        payload: { promptSentAt: new Date(now + 3_600_000).toISOString() },
        createdAt: new Date(now),
      });
    }

    let sent = 0;
    const victim = servers[2]!;
    const conversations = ids.map(async (_, i) => {
      for (let m = 0; m < MESSAGES_EACH; m++) {
        const text = `p${i}-m${m}`;
        const copies = m % 7 === 3 ? 3 : 1; // some messages arrive several times, at different processes
        await Promise.all(Array.from({ length: copies }, () => deliver(phoneOf(i), text, `scale-${i}-${m}`)));
        sent += 1;
        if (sent === Math.floor((PARTICIPANTS * MESSAGES_EACH) / 3)) void victim.kill();
      }
    });
    await Promise.all(conversations);
    expect((await victim.exited()).signal).toBe('SIGKILL');

    await waitFor(() => echoes().length >= PARTICIPANTS * MESSAGES_EACH, {
      what: 'every reply delivered',
      timeoutMs: 60_000,
      intervalMs: 200,
    }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await whereRepliesAre(new Set(echoes()))}`);
    });
    await waitFor(async () => (await timersLeft()) === 0, {
      what: 'every timer done',
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    // A reminder the killed process had claimed goes out once its claim runs out (30 s) elsewhere.
    const reminderDeliveries = () =>
      [...sink.accepted.values()].filter((delivery) => delivery.body.text === REMINDER_TEXT);
    await waitFor(() => reminderDeliveries().length >= TIMERS, {
      what: 'every reminder delivered',
      timeoutMs: 60_000,
      intervalMs: 200,
    });

    // Every reply was accepted once by its idempotency key, and each echo text appears once. Raw
    // resends happen only for what the killed process had handed over but not yet recorded as
    // sent (same idempotency key); before outbox claims, every process sent every item (~700 extra).
    // How many that is depends on how far behind the killed process was: 21 was seen on a host
    // loaded four times over (its sent marks ride on later commits, decision 020).
    expect(sink.received.length - sink.accepted.size).toBeLessThan(50);
    const replies = echoes();
    expect(new Set(replies).size).toBe(replies.length);
    expect(replies.length).toBe(PARTICIPANTS * MESSAGES_EACH);

    for (const [i, participantId] of ids.entries()) {
      const conversation = (await store.findConversationByParticipant(participantId))!;
      const transcript = (await store.listMessages(conversation.id)).filter(
        (message) => message.text !== REMINDER_TEXT && message.source !== 'system',
      );
      const said = transcript.filter((message) => message.role === 'user').map((message) => message.text);
      expect(said, `participant ${i}: each message once, in the order sent`).toEqual(
        Array.from({ length: MESSAGES_EACH }, (_, m) => `p${i}-m${m}`),
      );
      // Each message is answered right after it: turns never overlapped or reordered.
      const pairs = transcript.slice(1); // after the greeting
      for (let m = 0; m < MESSAGES_EACH; m++) {
        expect(pairs[2 * m]).toMatchObject({ role: 'user', text: `p${i}-m${m}` });
        expect(pairs[2 * m + 1]).toMatchObject({ role: 'assistant', text: `echo: p${i}-m${m}` });
      }
      const reminders = (await store.listMessages(conversation.id)).filter((message) => message.text === REMINDER_TEXT);
      expect(reminders, `participant ${i}: ten reminders`).toHaveLength(TIMERS / PARTICIPANTS);
    }
    expect(reminderDeliveries()).toHaveLength(TIMERS);
    if (process.env.SCALE_STATS)
      console.info({
        received: sink.received.length,
        accepted: sink.accepted.size,
        retakenTimers: await retakenTimers(),
      });
  }, 180_000);
});

async function retakenTimers(): Promise<number> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const { rows } = await admin.query(
    `select count(*)::int as n from "${SCHEMA}".timers where id like 'tmr_scale_%' and attempts > 1`,
  );
  await admin.end();
  return rows[0].n as number;
}

async function timersLeft(): Promise<number> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      `select count(*)::int as n from "${SCHEMA}".timers where id like 'tmr_scale_%' and status <> 'done'`,
    );
    return rows[0].n as number;
  } finally {
    await admin.end();
  }
}

/** For a failed run: each reply that never reached the sink, and where its message and reply are. */
async function whereRepliesAre(delivered: Set<string>): Promise<string> {
  const missing: string[] = [];
  for (let i = 0; i < PARTICIPANTS; i++)
    for (let m = 0; m < MESSAGES_EACH; m++) if (!delivered.has(`echo: p${i}-m${m}`)) missing.push(`p${i}-m${m}`);
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const lines = [`${missing.length} replies missing`];
    for (const text of missing.slice(0, 10)) {
      const inbox = await admin.query(
        `select id, status, error, conversation_id from "${SCHEMA}".inbox where text = $1 order by ordinal`,
        [text],
      );
      const outbox = await admin.query(
        `select id, status, attempts, last_error, next_attempt_at, sent_at from "${SCHEMA}".outbox where text = $1`,
        [`echo: ${text}`],
      );
      const conversationId = inbox.rows[0]?.conversation_id as string | undefined;
      const lease = conversationId
        ? await admin.query(`select * from "${SCHEMA}".conversation_leases where conversation_id = $1`, [
            conversationId,
          ])
        : { rows: [] };
      lines.push(
        `${text}: inbox ${JSON.stringify(inbox.rows)}; outbox ${JSON.stringify(outbox.rows)}; ` +
          `lease ${JSON.stringify(lease.rows)}; now ${Date.now()}`,
      );
    }
    return lines.join('\n');
  } finally {
    await admin.end();
  }
}
