import { afterEach, describe, expect, it } from 'vitest';
import { ChannelSink } from '../kit/channel-sink.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('GET /health: channels, timer worker, queues', () => {
  it('is degraded while a channel fails, names its last error, and is ok again once a send goes through', async () => {
    const sink = new ChannelSink({ failFirst: 2 });
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' }, { channel: sink });
    const before = await server.request('GET', '/health');
    expect(before.body).toMatchObject({ status: 'ok', problems: [], channels: {} });

    // The greeting's first attempt fails (retryable): degraded, with the error.
    expect((await server.request('POST', '/conversation/participants', { phone_number: '+14165550190' })).status).toBe(
      201,
    );
    await server.settle();
    expect(sink.attempts).toHaveLength(1);
    const failing = await server.request('GET', '/health');
    expect(failing.status).toBe(200);
    expect(failing.body).toMatchObject({
      status: 'degraded',
      problems: ['channel webhook: sink refused the delivery (1 in a row)'],
      channels: {
        webhook: {
          state: 'failing',
          lastError: 'sink refused the delivery',
          lastErrorRetryable: true,
          consecutiveFailures: 1,
          lastSuccessAt: null,
        },
      },
      queues: { outbox_pending: 1 },
    });

    // Retried as the clock moves: a second failure, then the send goes through.
    await server.request('POST', '/admin/clock', { advance: '10s' });
    expect(sink.attempts).toHaveLength(2);
    expect((await server.request('GET', '/health')).body.channels.webhook.consecutiveFailures).toBe(2);
    await server.request('POST', '/admin/clock', { advance: '10s' });
    expect(sink.delivered).toHaveLength(1);
    const recovered = await server.request('GET', '/health');
    expect(recovered.body).toMatchObject({
      status: 'ok',
      problems: [],
      channels: { webhook: { state: 'ok', consecutiveFailures: 0, lastError: 'sink refused the delivery' } },
      queues: { outbox_pending: 0 },
    });
    // Wall time (operators read it), in ISO form: the send went through during this test.
    const { lastSuccessAt, lastErrorAt } = recovered.body.channels.webhook;
    for (const at of [lastSuccessAt, lastErrorAt]) {
      expect(new Date(at).toISOString()).toBe(at);
      expect(Date.now() - Date.parse(at)).toBeLessThan(60_000);
    }
    expect(Date.parse(lastSuccessAt)).toBeGreaterThanOrEqual(Date.parse(lastErrorAt));
    // With a virtual clock timers fire when the clock moves: no worker runs, so none is stuck.
    expect(recovered.body.timer_worker).toEqual({ running: false, last_pass_at: null, last_pass_age_s: null });
  });

  it('shows the timer worker moving on the system clock', async () => {
    server = await startTestServer();
    const health = await server.request('GET', '/health');
    expect(health.body.status).toBe('ok');
    expect(health.body.timer_worker.running).toBe(true);
    expect(Date.parse(health.body.timer_worker.last_pass_at)).not.toBeNaN();
    expect(health.body.timer_worker.last_pass_age_s).toBeGreaterThanOrEqual(0);
  });
});
