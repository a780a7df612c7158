import { afterEach, describe, expect, it } from 'vitest';
import { ChildServer } from '../kit/child-server.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { WebhookSink } from '../kit/webhook-sink.ts';

// Real processes, killed with SIGKILL at a failpoint (src/core/failpoint.ts), restarted on the
// same SQLite file. The offline demo model sets up a daily schedule at 07:00 Toronto time.
const PHONE = '+14165550199';
const T0 = '2026-06-01T12:00:00Z';
/**
 * A day after T0. A restarted server resumes its virtual clock where the crash left it, so tests move it to a time,
 * not by a step.
 */
const DAY1 = '2026-06-02T12:00:00Z';
const PROMPT = /^After breakfast, spend two minutes on walking/;

let servers: ChildServer[] = [];
let sink: WebhookSink;
afterEach(async () => {
  for (const server of servers) await server.stop();
  servers = [];
  await sink?.close();
});

async function start(database: string, env: Record<string, string> = {}): Promise<ChildServer> {
  const server = await ChildServer.start({
    DATABASE_URL: database,
    CLOCK: 'virtual',
    CLOCK_START: T0,
    LLM_PROVIDER: 'offline',
    OUTBOUND_WEBHOOK_URL: sink.url,
    ...env,
  });
  servers.push(server);
  return server;
}

const accepted = () => [...sink.accepted.values()].map((delivery) => delivery.body as { text: string; id: string });
const deliveredTimes = (pattern: RegExp) => accepted().filter((message) => pattern.test(message.text)).length;

/** Enrolment and the four intake answers; each reply is delivered before the next message. */
async function intake(server: ChildServer): Promise<void> {
  expect(
    (
      await server.request('POST', '/conversation/participants', {
        phone_number: PHONE,
        name: 'Kai',
        timezone: 'America/Toronto',
      })
    ).status,
  ).toBe(201);
  await waitFor(() => sink.accepted.size === 1, { what: 'greeting delivered' });
  for (const [index, text] of ['I want to walk more', 'I want more energy', '7am', 'right after breakfast'].entries()) {
    await server.request('POST', '/conversation/inbound', { from: PHONE, text, message_id: `m${index}` });
    await waitFor(() => sink.accepted.size === index + 2, { what: `reply ${index + 1} delivered`, timeoutMs: 15_000 });
  }
}

async function advanceExpectingCrash(server: ChildServer): Promise<void> {
  await server.request('POST', '/admin/clock', { advance: '1d' }).catch(() => undefined);
  expect(await server.exited()).toMatchObject({ signal: 'SIGKILL' });
}

describe('crash recovery with real processes (SIGKILL)', () => {
  it(
    're-runs a timer whose claimer died, delivers its prompt once, and keeps the schedule firing after the ' +
      'restart',
    async () => {
      sink = await new WebhookSink().start();
      const database = tempSqliteUrl();
      const doomed = await start(database, { PROMPTPIPE_FAILPOINT: 'timer.after-claim' });
      await intake(doomed);
      await advanceExpectingCrash(doomed);
      expect(deliveredTimes(PROMPT)).toBe(0);

      const restarted = await start(database);
      const day1 = await restarted.request('POST', '/admin/clock', { to: DAY1 });
      expect(day1.body.result.fired).toBeGreaterThanOrEqual(1);
      await waitFor(() => deliveredTimes(/^Did you do it\?$/) === 1, { what: 'the daily poll after the restart' });
      expect(deliveredTimes(PROMPT)).toBe(1);

      await restarted.request('POST', '/admin/clock', { advance: '1d' });
      await waitFor(() => deliveredTimes(PROMPT) === 2, { what: "the next day's prompt" });
      const listed = (await restarted.request('GET', '/conversation/participants')).body.result;
      const timers = (await restarted.request('GET', `/conversation/participants/${listed[0].id}/timers`)).body.result;
      expect(timers.map((timer: { kind: string }) => timer.kind)).toContain('daily-prompt');
    },
    60_000,
  );

  it('re-sends a message whose sender died after the channel took it, with the same idempotency key', async () => {
    sink = await new WebhookSink().start();
    const database = tempSqliteUrl();
    // Skip the greeting and the four intake replies: die right after sending the daily prompt.
    const doomed = await start(database, { PROMPTPIPE_FAILPOINT: 'outbox.after-send', PROMPTPIPE_FAILPOINT_SKIP: '5' });
    await intake(doomed);
    await advanceExpectingCrash(doomed);
    const first = sink.received.filter((delivery) => PROMPT.test(delivery.body.text));
    expect(first).toHaveLength(1);

    const restarted = await start(database);
    await restarted.request('POST', '/admin/clock', { to: DAY1 });
    await waitFor(() => sink.received.filter((delivery) => PROMPT.test(delivery.body.text)).length === 2, {
      what: 'the re-sent prompt',
    });
    const [before, after] = sink.received.filter((delivery) => PROMPT.test(delivery.body.text));
    expect(after!.headers['idempotency-key']).toBe(before!.headers['idempotency-key']);
    expect(deliveredTimes(PROMPT)).toBe(1); // the channel honours the key: one delivery
    await waitFor(() => deliveredTimes(/^Did you do it\?$/) === 1, { what: 'the rest of the outbox' });
  }, 60_000);
});
