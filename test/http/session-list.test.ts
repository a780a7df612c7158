import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { openWebSession } from '../kit/web-session.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('GET /api/conversations', () => {
  it('lists web sessions newest first with their last activity, by flow, a page at a time', async () => {
    const first = await openWebSession(server, 'echo');
    const second = await openWebSession(server, 'echo');
    const desk = await openWebSession(server, 'service-desk');
    await first.say('still here');
    const all = await server.request('GET', '/api/conversations');
    expect(all.body).toMatchObject({ status: 'ok', total: 3, next: null });
    expect(all.body.result.map((session: { id: string }) => session.id)).toEqual([desk.id, second.id, first.id]);
    const latest = all.body.result[2];
    expect(Date.parse(latest.last_activity_at)).toBeGreaterThan(Date.parse(latest.created_at));
    const echoes = await server.request('GET', '/api/conversations?flow=echo&limit=1');
    expect(echoes.body).toMatchObject({
      total: 2,
      next: '/api/conversations?limit=1&offset=1&flow=echo',
      result: [{ id: second.id, flow: 'echo' }],
    });
    expect(echoes.headers.get('link')).toBe('</api/conversations?limit=1&offset=1&flow=echo>; rel="next"');
    expect(await server.request('GET', '/api/conversations?limit=0')).toMatchObject({
      status: 400,
      body: { field: 'limit' },
    });
    expect(await server.request('GET', '/api/conversations?flow=nope')).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', field: 'flow', message: expect.stringContaining('service-desk') },
    });
  });

  it('lists sessions started at the same instant (a virtual clock) newest first too', async () => {
    const paused = await startTestServer({ CLOCK: 'virtual' });
    try {
      const started = [];
      for (let i = 0; i < 3; i++) started.push((await openWebSession(paused, 'echo')).id);
      const listed = await paused.request('GET', '/api/conversations');
      expect(new Set(listed.body.result.map((session: { created_at: string }) => session.created_at)).size).toBe(1);
      expect(listed.body.result.map((session: { id: string }) => session.id)).toEqual(started.reverse());
    } finally {
      await paused.close();
    }
  });
});

describe('GET /api/conversations/:id/turns', () => {
  it("lists a web session's turns with their tool calls, newest first, as a participant's do", async () => {
    const session = await openWebSession(server, 'echo');
    await session.say('one');
    await session.say('two');
    const turns = await server.request('GET', `/api/conversations/${session.id}/turns?limit=2`);
    expect(turns.status).toBe(200);
    expect(turns.body.result).toHaveLength(2);
    expect(turns.body.result[0]).toMatchObject({ trigger: 'message', status: 'completed', tool_calls: [] });
    expect(await server.request('GET', '/api/conversations/nope/turns')).toMatchObject({ status: 404 });
    expect(await server.request('GET', `/api/conversations/${session.id}/turns?limit=0`)).toMatchObject({
      status: 400,
      body: { field: 'limit' },
    });
  });
});
