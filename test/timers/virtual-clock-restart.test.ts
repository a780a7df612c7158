import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function restart(env: Record<string, string>): Promise<TestServer> {
  await server?.close();
  server = await startTestServer(env);
  return server;
}

const clockNow = async (s: TestServer) => (await s.request('GET', '/admin/clock')).body.result.now as string;

describe('CLOCK=virtual across restarts', () => {
  it('resumes from the last virtual time, not from CLOCK_START or the wall clock', async () => {
    const url = tempSqliteUrl();
    const env = { DATABASE_URL: url, CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' };
    let s = await restart(env);
    expect(await clockNow(s)).toBe('2026-06-01T12:00:00.000Z');
    expect((await s.request('POST', '/admin/clock', { advance: '3d' })).body.result.now).toBe(
      '2026-06-04T12:00:00.000Z',
    );

    s = await restart(env);
    expect(await clockNow(s)).toBe('2026-06-04T12:00:00.000Z');
    s = await restart({ DATABASE_URL: url, CLOCK: 'virtual' });
    expect(await clockNow(s)).toBe('2026-06-04T12:00:00.000Z');
    // A later CLOCK_START moves it forward; the clock never goes back.
    s = await restart({ ...env, CLOCK_START: '2026-07-01T00:00:00Z' });
    expect(await clockNow(s)).toBe('2026-07-01T00:00:00.000Z');
  });

  it('keeps the first start time of a clock that was never moved', async () => {
    const env = { DATABASE_URL: tempSqliteUrl(), CLOCK: 'virtual' };
    const first = await clockNow(await restart(env));
    expect(await clockNow(await restart(env))).toBe(first);
    expect(Date.now()).toBeGreaterThan(Date.parse(first)); // the wall clock did move on meanwhile
  });
});
