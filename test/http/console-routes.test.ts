import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

const TOKEN = 'console-test-token-0123456789';
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ API_TOKEN: TOKEN });
});
afterAll(() => server.close());
const auth = { authorization: `Bearer ${TOKEN}` };

describe('console routes', () => {
  it('serves the console and the API reference publicly, with a strict content security policy', async () => {
    for (const path of ['/', '/docs', '/console/app.js', '/console/styles.css']) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect((await fetch(`${server.url}/`)).headers.get('content-type')).toContain('text/html');
    expect((await fetch(`${server.url}/console/package.json`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${server.url}/`, { method: 'POST' })).status).toBe(405);
  });

  it('streams the id of each conversation that changes, to token holders only', async () => {
    expect((await fetch(`${server.url}/console/changes`)).status).toBe(401);

    const abort = new AbortController();
    const response = await fetch(`${server.url}/console/changes`, { headers: auth, signal: abort.signal });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const created = await server.request('POST', '/conversation/participants', { phone_number: '+14165550180' }, auth);
    const state = await server.request(
      'GET',
      `/conversation/participants/${created.body.result.id}/state`,
      undefined,
      auth,
    );

    let received = '';
    while (!received.includes(state.body.result.conversation_id)) {
      const { value, done } = await reader.read();
      if (done) break;
      received += value;
    }
    expect(received).toContain(`event: change\ndata: {"conversation_id":"${state.body.result.conversation_id}"}`);
    abort.abort();
  });
});
