import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { parsePrometheusText, sampleValue } from '../kit/prometheus-text.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

const TOKEN = 'metrics-test-token-0123456789';
const PHONE = '+14165550181';
let server: TestServer;
const auth = { authorization: `Bearer ${TOKEN}` };

beforeAll(async () => {
  server = await startTestServer(
    { API_TOKEN: TOKEN },
    { provider: createScriptedProvider(() => ({ text: 'hello there' })) },
  );
});
afterAll(() => server.close());

const scrape = async () => {
  const response = await server.request('GET', '/metrics', undefined, auth);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(response.body as string);
};

describe('GET /metrics', () => {
  it('needs the API token unless METRICS_PUBLIC is set', async () => {
    expect((await server.request('GET', '/metrics')).status).toBe(401);
    const open = await startTestServer({ API_TOKEN: TOKEN, METRICS_PUBLIC: 'true' });
    try {
      expect((await open.request('GET', '/metrics')).status).toBe(200);
      expect((await open.request('GET', '/conversation/participants')).status).toBe(401);
    } finally {
      await open.close();
    }
  });

  it('parses as Prometheus text; its counters move with a turn, a model call, a delivery and a request', async () => {
    const enrolled = await server.request('POST', '/conversation/participants', { phone_number: PHONE }, auth);
    expect(enrolled.status).toBe(201);
    await server.sink.waitFor(1);
    await server.settle();
    const before = await scrape();
    expect(
      sampleValue(before, 'promptpipe_http_requests_total', {
        method: 'POST',
        route: '/conversation/participants',
        status: '201',
      }),
    ).toBe(1);

    await server.request('POST', '/conversation/inbound', { from: PHONE, text: 'hi' }, auth);
    await server.sink.waitFor(2);
    await server.settle();
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(moved('promptpipe_turns_total', { flow: 'habit-coach', status: 'completed' })).toBe(1);
    expect(moved('promptpipe_turn_duration_seconds_count', { flow: 'habit-coach' })).toBe(1);
    expect(moved('promptpipe_model_calls_total', { outcome: 'ok' })).toBe(1);
    expect(moved('promptpipe_deliveries_total', { outcome: 'sent' })).toBe(1);
    expect(
      moved('promptpipe_http_requests_total', { method: 'POST', route: '/conversation/inbound', status: '202' }),
    ).toBe(1);
    expect(after.some((sample) => sample.name === 'promptpipe_process_resident_memory_bytes')).toBe(true);
    expect(after.some((sample) => sample.name === 'promptpipe_turn_backlog')).toBe(true);
  });
});
