import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientKey, FailureLimiter } from '../../src/http/failure-limiter.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

const API_TOKEN = 'limit-test-token-0123456789';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ API_TOKEN, RATE_LIMITS: 'on', AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW: '1m' });
});

afterAll(async () => {
  await server?.close();
});

/** A request from `ip`, through the whole pipeline (no socket: the address is the test's to choose). */
const from = (ip: string, token?: string) =>
  server.app.inject({
    method: 'GET',
    url: '/conversation/participants',
    remoteAddress: ip,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });

describe('failed authentications per client address', () => {
  it(
    'answers 429 rate_limited with Retry-After after the limit, even to the right token, and to that address ' + 'only',
    async () => {
      const statuses = [];
      for (let attempt = 0; attempt < 3; attempt++)
        statuses.push((await from('203.0.113.7', `wrong-${attempt}`)).statusCode);
      expect(statuses).toEqual([401, 401, 401]);

      const refused = await from('203.0.113.7', 'wrong-again');
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ code: 'rate_limited', field: 'authorization' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
      // A right guess cannot be told from a wrong one while blocked.
      expect((await from('203.0.113.7', API_TOKEN)).statusCode).toBe(429);

      expect((await from('198.51.100.2', API_TOKEN)).statusCode).toBe(200);
      expect((await from('198.51.100.2', 'wrong')).statusCode).toBe(401);
      // Public routes stay open.
      expect(
        (await server.app.inject({ method: 'GET', url: '/health', remoteAddress: '203.0.113.7' })).statusCode,
      ).toBe(200);
    },
  );

  it('counts a whole IPv6 /64 as one client, and a missing token as a failure', async () => {
    for (const ip of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::3'])
      expect((await from(ip)).statusCode).toBe(401);
    expect((await from('2001:db8:1:2::4', API_TOKEN)).statusCode).toBe(429);
    expect((await from('2001:db8:1:3::1', API_TOKEN)).statusCode).toBe(200);
  });

  it('is off with RATE_LIMITS=off (loopback servers only)', async () => {
    const open = await startTestServer({ API_TOKEN, RATE_LIMITS: 'off', AUTH_FAILURE_LIMIT: '1' });
    try {
      const statuses = [];
      for (let attempt = 0; attempt < 5; attempt++)
        statuses.push(
          (await open.app.inject({ method: 'GET', url: '/conversation/participants', remoteAddress: '203.0.113.9' }))
            .statusCode,
        );
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
    } finally {
      await open.close();
    }
  });
});

describe('FailureLimiter', () => {
  it('blocks after the limit until the window that began with the first failure ends', () => {
    let now = 1_000;
    const limiter = new FailureLimiter({ limit: 2, windowMs: 10_000, now: () => now });
    limiter.record('a');
    now += 4_000;
    limiter.record('a');
    expect(limiter.blockedFor('a')).toBe(6_000);
    expect(limiter.blockedFor('b')).toBe(0);
    now += 6_000;
    expect(limiter.blockedFor('a')).toBe(0);
    limiter.record('a');
    expect(limiter.blockedFor('a')).toBe(0);
  });

  it('forgets the oldest address when full, never growing past maxKeys', () => {
    const limiter = new FailureLimiter({ limit: 1, windowMs: 10_000, now: () => 0, maxKeys: 2 });
    for (const key of ['a', 'b', 'c']) limiter.record(key);
    expect(['a', 'b', 'c'].map((key) => limiter.blockedFor(key))).toEqual([0, 10_000, 10_000]);
  });

  it('keys IPv6 addresses by their /64 and leaves IPv4 alone', () => {
    expect(clientKey('2001:DB8:0:0001::7')).toBe('2001:db8:0:1::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('::ffff:203.0.113.7');
  });
});
