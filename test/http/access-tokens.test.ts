// @requires postgres
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenSigner } from '../../src/http/signed-token.ts';
import { TicketBook } from '../../src/http/tickets.ts';
import { EventClient } from '../kit/event-client.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { PG_URL } from '../kit/requirements.ts';

// Decision 007: tickets and client tokens are signed with a key every process shares, so a
// browser behind a load balancer without sticky sessions may land anywhere. Two servers in this
// process on one PostgreSQL schema stand for two processes of one deployment.
const SCHEMA = `access_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const API_TOKEN = 'access-test-token-0123456789';
const TOKEN_SECRET = 'shared-signing-secret-0123456789abcdef';
const admin = { authorization: `Bearer ${API_TOKEN}` };

let a: TestServer;
let b: TestServer;
let conversation: string;
let other: string;

beforeAll(async () => {
  const env = { DATABASE_URL: PG_URL, DATABASE_SCHEMA: SCHEMA, API_TOKEN, TOKEN_SECRET };
  a = await startTestServer(env);
  b = await startTestServer(env);
  conversation = (await a.request('POST', '/api/conversations', { flow: 'service-desk' }, admin)).body.result.id;
  other = (await a.request('POST', '/api/conversations', { flow: 'service-desk' }, admin)).body.result.id;
}, 60_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`drop schema if exists "${SCHEMA}" cascade`);
  await client.end();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const streamUrl = (server: TestServer, id: string) => `${server.url}/api/conversations/${id}/stream`;
const socketUrl = (server: TestServer, id: string) =>
  `${server.url.replace(/^http/, 'ws')}/api/conversations/${id}/socket`;

/** The status of opening a conversation's event stream (closed again at once when it opened). */
async function openStream(url: string, headers: Record<string, string> = {}): Promise<number> {
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  if (response.status === 200) expect(response.headers.get('content-type')).toBe('text/event-stream');
  abort.abort();
  return response.status;
}

/** The 401's field and message for a stream URL. */
async function refusalOf(url: string): Promise<{ field: string; message: string }> {
  const response = await fetch(url);
  expect(response.status).toBe(401);
  const { field, message } = (await response.json()) as { field: string; message: string };
  return { field, message };
}

async function ticketFrom(server: TestServer, headers: Record<string, string>, body?: unknown): Promise<string> {
  const response = await server.request('POST', '/api/tickets', body, headers);
  expect(response.status).toBe(200);
  return response.body.result.ticket;
}

async function clientToken(scopes: string[], id = conversation, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await a.request('POST', '/api/tokens', { conversation_id: id, scopes, ...extra }, admin);
  expect(response.status).toBe(200);
  return response.body.result.token;
}

describe('stream tickets across processes', () => {
  it('a ticket minted on A opens the stream on B, once per process', async () => {
    const ticket = await ticketFrom(a, admin, { conversation_id: conversation });
    expect(await openStream(`${streamUrl(b, conversation)}?ticket=${ticket}`)).toBe(200);
    expect(await openStream(`${streamUrl(b, conversation)}?ticket=${ticket}`)).toBe(401);
    expect(await refusalOf(`${streamUrl(b, conversation)}?ticket=${ticket}`)).toEqual({
      field: 'ticket',
      message: expect.stringContaining('was used already'),
    });

    const socketTicket = await ticketFrom(a, admin);
    const client = new EventClient(`${socketUrl(b, conversation)}?ticket=${socketTicket}`);
    await client.opened;
    await client.waitFor((event) => event.type === 'resync', 'snapshot');
    client.close();
  });

  it('refuses a forged, tampered, expired or misdirected ticket with 401', async () => {
    const foreign = new TicketBook(new TokenSigner('another-deployments-secret-0123456789')).issue().ticket;
    const expired = new TicketBook(new TokenSigner(TOKEN_SECRET, () => Date.now() - 120_000)).issue().ticket;
    const genuine = await ticketFrom(a, admin, { conversation_id: conversation });
    const [body, mac] = [genuine.slice(0, genuine.lastIndexOf('.')), genuine.slice(genuine.lastIndexOf('.') + 1)];
    const claims = JSON.parse(Buffer.from(body.slice(4), 'base64url').toString());
    const widenedBody = Buffer.from(JSON.stringify({ ...claims, conversation: null })).toString('base64url');
    const widened = `pp1.${widenedBody}.${mac}`;
    for (const ticket of [foreign, expired, widened, 'not-a-ticket']) {
      expect(await openStream(`${streamUrl(b, conversation)}?ticket=${encodeURIComponent(ticket)}`)).toBe(401);
    }
    expect((await refusalOf(`${streamUrl(b, conversation)}?ticket=${expired}`)).message).toContain('has expired');
    expect((await refusalOf(`${streamUrl(b, conversation)}?ticket=${foreign}`)).message).toContain('not a valid');
    expect((await refusalOf(`${streamUrl(b, other)}?ticket=${genuine}`)).message).toContain('another conversation');
    // Limited to one conversation: not another's, and not the API.
    expect(await openStream(`${streamUrl(b, other)}?ticket=${genuine}`)).toBe(401);
    expect((await b.fetch(`/api/conversations/${conversation}/summary?ticket=${genuine}`)).status).toBe(401);
    // Neither ticket was spent by those refusals' checks on the right conversation: the genuine one still opens it.
    expect(await openStream(`${streamUrl(b, conversation)}?ticket=${genuine}`)).toBe(200);
  });

  it('is valid only with the key it was signed with: a server with another secret refuses it', async () => {
    const elsewhere = await startTestServer({ API_TOKEN, TOKEN_SECRET: 'a-different-deployment-secret-0123456789' });
    try {
      const id = (await elsewhere.request('POST', '/api/conversations', { flow: 'service-desk' }, admin)).body.result
        .id;
      const ticket = await ticketFrom(a, admin);
      expect(await openStream(`${streamUrl(elsewhere, id)}?ticket=${ticket}`)).toBe(401);
      expect(await openStream(`${streamUrl(elsewhere, id)}?ticket=${await ticketFrom(elsewhere, admin)}`)).toBe(200);
    } finally {
      await elsewhere.close();
    }
  });
});

describe('client tokens (POST /api/tokens)', () => {
  it('are minted by the API token only, with the conversation, scopes and expiry', async () => {
    const response = await a.request(
      'POST',
      '/api/tokens',
      { conversation_id: conversation, scopes: ['write', 'read'], expires_in: 600 },
      admin,
    );
    expect(response.status).toBe(200);
    expect(response.body.result).toMatchObject({ conversation_id: conversation, scopes: ['read', 'write'] });
    const expiresIn = Date.parse(response.body.result.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(590_000);
    expect(expiresIn).toBeLessThanOrEqual(600_000);

    const token = response.body.result.token;
    expect(
      (await b.request('POST', '/api/tokens', { conversation_id: conversation, scopes: ['read'] }, bearer(token))).body,
    ).toMatchObject({ code: 'forbidden' });
    expect((await b.request('POST', '/api/tokens', { conversation_id: conversation, scopes: ['read'] })).status).toBe(
      401,
    );
  });

  it('refuse bad requests with the field named', async () => {
    const cases: Array<[unknown, string, string]> = [
      [{ scopes: ['read'] }, 'invalid_request', 'conversation_id'],
      [{ conversation_id: conversation, scopes: [] }, 'invalid_request', 'scopes'],
      [{ conversation_id: conversation, scopes: ['admin'] }, 'invalid_request', 'scopes.0'],
      [{ conversation_id: conversation, scopes: ['read', 'read'] }, 'invalid_request', 'scopes'],
      [{ conversation_id: conversation, scopes: ['read'], expires_in: 0 }, 'invalid_request', 'expires_in'],
      [{ conversation_id: conversation, scopes: ['read'], expires_in: 86_401 }, 'invalid_request', 'expires_in'],
      [{ conversation_id: 'conv_nobody', scopes: ['read'] }, 'not_found', 'conversation_id'],
    ];
    for (const [body, code, field] of cases) {
      expect((await a.request('POST', '/api/tokens', body, admin)).body, JSON.stringify(body)).toMatchObject({
        code,
        field,
      });
    }
  });

  it('"read" opens its conversation\'s stream on any process, and mints tickets for it only', async () => {
    const token = await clientToken(['read']);
    expect(await openStream(streamUrl(b, conversation), bearer(token))).toBe(200);
    const client = await new Promise<EventClient>((resolve, reject) => {
      // Node's WebSocket sends no custom headers: a browser-like client asks for a ticket with its token.
      ticketFrom(b, bearer(token)).then((ticket) => {
        const socket = new EventClient(`${socketUrl(a, conversation)}?ticket=${ticket}`);
        socket.opened.then(() => resolve(socket), reject);
      }, reject);
    });
    client.close();
    // A client that can set headers opens the WebSocket with the token itself.
    const path = `/api/conversations/${conversation}/socket`;
    const socket = await b.app.injectWS(path, { headers: bearer(token) });
    const first = await new Promise<string>((resolve) =>
      socket.once('message', (data: unknown) => resolve(String(data))),
    );
    expect(JSON.parse(first)).toMatchObject({ type: 'resync', conversationId: conversation });
    socket.terminate();
    await expect(b.app.injectWS(path, { headers: bearer(await clientToken(['write'])) })).rejects.toThrow(/403/);
    await expect(b.app.injectWS(`/api/conversations/${other}/socket`, { headers: bearer(token) })).rejects.toThrow(
      /403/,
    );
    const ticket = await ticketFrom(b, bearer(token));
    expect(await openStream(`${streamUrl(a, other)}?ticket=${ticket}`)).toBe(401);
    expect((await b.request('POST', '/api/tickets', { conversation_id: other }, bearer(token))).body).toMatchObject({
      code: 'forbidden',
      field: 'conversation_id',
    });
    expect(
      (await b.request('POST', `/api/conversations/${conversation}/resync`, { lastEventId: 0 }, bearer(token))).status,
    ).toBe(200);
  });

  it('"write" posts its conversation\'s messages; "read" alone may not', async () => {
    const writer = await clientToken(['write']);
    const posted = await b.request(
      'POST',
      `/api/conversations/${conversation}/message`,
      { text: 'hello from the browser' },
      bearer(writer),
    );
    expect(posted.status).toBe(202);
    expect(await openStream(streamUrl(b, conversation), bearer(writer))).toBe(403);
    const reader = await clientToken(['read']);
    expect(
      (await b.request('POST', `/api/conversations/${conversation}/message`, { text: 'hi' }, bearer(reader))).body,
    ).toMatchObject({ code: 'forbidden', field: 'authorization' });
  });

  it('open nothing else: other conversations, the operator API, participant ids in the path', async () => {
    const token = await clientToken(['read', 'write']);
    const refusals = [
      await b.request('POST', `/api/conversations/${other}/message`, { text: 'hi' }, bearer(token)),
      await b.request('GET', `/api/conversations/${conversation}/summary`, undefined, bearer(token)),
      await b.request('GET', '/conversation/participants', undefined, bearer(token)),
      await b.request('POST', '/api/conversations', { flow: 'service-desk' }, bearer(token)),
      await b.request('GET', '/admin/clock', undefined, bearer(token)),
    ];
    expect(refusals.map((response) => [response.status, response.body.code])).toEqual(
      Array(refusals.length).fill([403, 'forbidden']),
    );
    expect(await openStream(streamUrl(b, other), bearer(token))).toBe(403);
  });

  it('expired: 401 token_expired; forged or tampered: 401 unauthorized', async () => {
    const expired = new TokenSigner(TOKEN_SECRET).sign({
      kind: 'client',
      conversation,
      scopes: ['read', 'write'],
      exp: Date.now() - 1,
    }).token;
    const late = await b.request('POST', `/api/conversations/${conversation}/message`, { text: 'hi' }, bearer(expired));
    expect(late.body).toMatchObject({ code: 'token_expired' });
    expect(late.headers.get('www-authenticate')).toMatch(/^Bearer realm="PromptPipe", error="invalid_token"/);
    const forged = new TokenSigner('someone-elses-secret-0123456789abcdef').sign({
      kind: 'client',
      conversation,
      scopes: ['read'],
      exp: Date.now() + 60_000,
    }).token;
    const real = await clientToken(['read']);
    const tampered = real.replace(/\.[^.]+$/, `.${Buffer.alloc(32).toString('base64url')}`);
    const ticketAsToken = await ticketFrom(a, admin, { conversation_id: conversation });
    for (const token of [forged, tampered, ticketAsToken]) {
      const refused = await b.request(
        'POST',
        `/api/conversations/${conversation}/resync`,
        { lastEventId: 0 },
        bearer(token),
      );
      expect(refused.body).toMatchObject({ code: 'unauthorized' });
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="PromptPipe"');
    }
  });

  it('are described in the OpenAPI document', async () => {
    const spec = (await a.request('GET', '/openapi.json')).body;
    expect(spec.components.securitySchemes.client_token).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(spec.paths['/api/tokens'].post.requestBody.content['application/json'].schema.required).toEqual([
      'conversation_id',
      'scopes',
    ]);
    expect(spec.paths['/api/conversations/{id}/message'].post.security).toEqual([
      { bearer: [] },
      { client_token: ['write'] },
    ]);
    // Every operation states its requirement: the API token alone where client tokens are refused.
    expect(spec.paths['/api/conversations/{id}/summary'].get.security).toEqual([{ bearer: [] }]);
  });
});
