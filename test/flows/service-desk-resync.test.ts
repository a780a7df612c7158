import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventClient } from '../kit/event-client.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { openWebSession } from '../kit/web-session.ts';
import { waitFor } from '../kit/wait-for.ts';

// A UI that reconnects rebuilds the service desk's screen from the resync snapshot's `view`:
// what waits for a yes, the options on screen, verification (issue #22). Never secrets or ids.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z' });
});
afterAll(() => server?.close());

const resync = async (id: string) => {
  const answer = await server.request('POST', `/api/conversations/${id}/resync`, { lastEventId: 0 });
  expect(answer.status).toBe(200);
  return answer.body.result.resync.data as { state: string; view: Record<string, unknown> | null };
};
/** Nothing that verifies a caller or names a record: ZIP, phone, customer, appointment or window ids. */
const expectNoSecrets = (view: unknown) =>
  expect(JSON.stringify(view)).not.toMatch(/94107|\+1|415|555|apt_|slot_|cus_|inv_|tkt_/);

describe('service desk resync view', () => {
  it('carries verification, what is awaited, the options on screen and what a yes would confirm', async () => {
    const { id, say, client } = await openWebSession(server, 'service-desk');
    expect((await resync(id)).view).toEqual({
      verification: { status: 'unverified', name: null, attemptsLeft: 3 },
      task: null,
      awaiting: 'verification',
      options: null,
      confirmation: null,
      address: null,
    });
    await say('415-555-0100 and 11111');
    expect((await resync(id)).view).toMatchObject({ verification: { status: 'unverified', attemptsLeft: 2 } });
    await say('415-555-0100, 94107');
    await say('I want to reschedule');
    const choosing = await resync(id);
    expect(choosing.view).toMatchObject({
      verification: { status: 'verified', name: 'Alex Rivera', attemptsLeft: null },
      task: 'reschedule',
      awaiting: 'appointment',
      options: {
        kind: 'appointment',
        items: [
          { position: 1, label: 'Quarterly pest control on Thursday, June 4, 9:00–11:00 AM' },
          { position: 2, label: 'Termite inspection on Thursday, June 18, 1:00–3:00 PM' },
        ],
      },
    });
    await say('the first');
    await say('the second');
    const lastSeq = client.logged().at(-1)!.seq;

    // A client that reconnects over the WebSocket gets the same view with its resync.
    const again = await EventClient.connect(server.url, id, `?lastEventId=${lastSeq}`);
    const snapshot = (await again.waitFor((event) => event.type === 'resync', 'the resync')) as {
      data: { state: string; view: Record<string, unknown> };
    };
    expect(snapshot.data.state).toBe('PendingRescheduleConfirmation');
    expect(snapshot.data.view).toEqual({
      verification: { status: 'verified', name: 'Alex Rivera', attemptsLeft: null },
      task: 'reschedule',
      awaiting: 'confirmation',
      options: {
        kind: 'window',
        items: [
          { position: 1, label: 'Tuesday, June 2, 9:00–11:00 AM' },
          { position: 2, label: 'Tuesday, June 2, 1:00–3:00 PM' },
          { position: 3, label: 'Wednesday, June 3, 9:00–11:00 AM' },
          { position: 4, label: 'Wednesday, June 3, 1:00–3:00 PM' },
          // Not Thursday 9:00–11:00 AM: the caller's own visit is then.
          { position: 5, label: 'Thursday, June 4, 1:00–3:00 PM' },
        ],
      },
      confirmation: {
        action: 'reschedule',
        appointment: 'Quarterly pest control on Thursday, June 4, 9:00–11:00 AM',
        window: 'Tuesday, June 2, 1:00–3:00 PM',
      },
      address: null,
    });
    expectNoSecrets(snapshot.data.view);
    again.close();
    expect(await resync(id)).toMatchObject({ view: snapshot.data.view });
  });

  it('names the candidates of an unclear request, and is null for a flow without a view', async () => {
    const { id, say } = await openWebSession(server, 'service-desk');
    await say('415-555-0100, 94107');
    await say('I need to sort out my appointment');
    const { view } = await resync(id);
    expect(view).toMatchObject({
      awaiting: 'clarification',
      options: {
        kind: 'intent',
        items: [
          { position: 1, label: 'move an appointment to another time' },
          { position: 2, label: 'cancel an appointment' },
          { position: 3, label: 'hear when the next appointment is' },
        ],
      },
    });
    expectNoSecrets(view);
    const echo = (await server.request('POST', '/api/conversations', { flow: 'echo' })).body.result.id as string;
    await waitFor(async () => (await server.store.listMessages(echo)).length > 0, { what: 'echo greeting' });
    expect((await resync(echo)).view).toBeNull();
  });
});
