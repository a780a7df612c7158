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
      const response = await server.fetch(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect((await server.fetch('/')).headers.get('content-type')).toContain('text/html');
    expect((await server.fetch('/console/package.json', { headers: auth })).status).toBe(404);
    expect((await server.fetch('/', { method: 'POST' })).status).toBe(405);
  });

  it('streams the id of each conversation that changes, to token holders only', async () => {
    expect((await server.fetch('/console/changes')).status).toBe(401);

    // The stream itself over a connection: it never ends, which is what a socket is for.
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
