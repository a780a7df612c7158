import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRoutes } from '../../src/http/api-description.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

const TOKEN = 'openapi-test-token-0123456789';
const SID = 'AC' + 'a1'.repeat(16);
/** Every optional part on, so every route the server can register is registered. */
const EVERYTHING = {
  API_TOKEN: TOKEN,
  CLOCK: 'virtual',
  WHATSAPP_ACCESS_TOKEN: 'EAAG-token',
  WHATSAPP_PHONE_NUMBER_ID: '1234567890',
  WHATSAPP_APP_SECRET: 'app-secret-0123',
  WHATSAPP_VERIFY_TOKEN: 'verify-token-0123',
  TWILIO_ACCOUNT_SID: SID,
  TWILIO_AUTH_TOKEN: 'twilio-token-0123',
  TWILIO_FROM: '+14165550100',
};

let server: TestServer;
let document: any;

beforeAll(async () => {
  server = await startTestServer(EVERYTHING);
  const response = await server.request('GET', '/openapi.json');
  expect(response.status).toBe(200);
  document = response.body;
});
afterAll(() => server.close());

const operations = () =>
  Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document (served without a token)', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes every route the server registers, each with a response schema', () => {
    const routes = registeredRoutes(server.app).filter((route) => !route.methodNotAllowed);
    expect(routes.length).toBeGreaterThan(50);
    const missing = routes.filter(({ method, path }) => !document.paths[path]?.[method.toLowerCase()]);
    expect(missing).toEqual([]);
    for (const { method, path } of routes) {
      const responses = document.paths[path][method.toLowerCase()].responses as Record<string, any>;
      const success = Object.entries(responses).filter(([status]) => /^[123]/.test(status));
      expect(success, `${method} ${path} has a success response`).toHaveLength(1);
      const [status, response] = success[0]!;
      // A 101 (the socket) and a 204 have no body; everything else says what it answers.
      if (status !== '101' && status !== '204')
        expect(Object.values(response.content ?? {}), `${method} ${path}`).not.toHaveLength(0);
      for (const [, media] of Object.entries(response.content ?? {})) expect((media as any).schema).toBeDefined();
    }
  });

  it('gives every operation its error responses, with the Error envelope, and its security requirement', () => {
    for (const { path, method, op } of operations()) {
      const what = `${method} ${path}`;
      expect(Array.isArray(op.security), `${what} has security`).toBe(true);
      const errors = Object.entries(op.responses as Record<string, any>).filter(([status]) => /^[45]/.test(status));
      expect(errors.length, `${what} has error responses`).toBeGreaterThan(0);
      for (const [, response] of errors)
        expect(response.content['application/json'].schema.$ref).toMatch(/^#\/components\/schemas\/(Error|Health)$/);
    }
    const op = (method: string, path: string) => document.paths[path][method];
    // Public routes need nothing; the API needs the token; a client token's routes name its scopes.
    expect(op('get', '/health').security).toEqual([]);
    expect(op('get', '/openapi.json').security).toEqual([]);
    expect(op('get', '/docs').security).toEqual([]);
    expect(op('get', '/conversation/participants').security).toEqual([{ bearer: [] }]);
    expect(op('post', '/api/conversations/{id}/message').security).toEqual([
      { bearer: [] },
      { client_token: ['write'] },
    ]);
    expect(op('post', '/webhooks/whatsapp').security).toEqual([{ whatsapp_signature: [] }]);
    expect(op('post', '/webhooks/twilio').security).toEqual([{ twilio_signature: [] }]);
    // The errors a route can answer with: enrolment conflicts, a missing participant, auth.
    expect(Object.keys(op('post', '/conversation/participants').responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '409', '413', '415', '503']),
    );
    expect(Object.keys(op('get', '/conversation/participants/{id}').responses)).toEqual(
      expect.arrayContaining(['200', '404']),
    );
    expect(op('get', '/health').responses['503'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/Health',
    );
  });

  it('describes the socket frames, the event stream and the outbound webhook', () => {
    const schemas = document.components.schemas;
    const socket = document.paths['/api/conversations/{id}/socket'].get;
    expect(Object.keys(socket.responses)).toContain('101');
    expect(socket['x-websocket']).toEqual({
      serverFrames: { $ref: '#/components/schemas/SessionEvent' },
      clientFrames: { $ref: '#/components/schemas/SocketFrame' },
    });
    const frameTypes = schemas.SocketFrame.oneOf.map((frame: any) => frame.properties.type.const);
    expect(frameTypes.sort()).toEqual(['barge_in', 'final_transcript', 'message', 'ping', 'resync']);
    const eventTypes = schemas.SessionEvent.oneOf.map((event: any) => event.properties.type.const);
    expect(eventTypes).toEqual(expect.arrayContaining(['token', 'status', 'final', 'error', 'resync', 'ack']));
    expect(document.paths['/api/conversations/{id}/stream'].get.responses['200'].content).toHaveProperty(
      'text/event-stream',
    );
    const webhook = document.webhooks['outbound-message'].post;
    expect(webhook.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/OutboundWebhook');
    expect(schemas.OutboundWebhook.required).toEqual(['id', 'participant_id', 'to', 'kind', 'text', 'created_at']);
  });
});
