import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(
    { DEFAULT_PHONE_REGION: 'US' },
    { provider: createScriptedProvider(() => ({ text: 'Hi!' })) },
  );
});
afterAll(() => server.close());

describe('phone numbers with DEFAULT_PHONE_REGION=US', () => {
  it('enrols a national number as E.164, and the same person written another way is a 409', async () => {
    const enrolled = await server.request('POST', '/conversation/participants', { phone_number: '(415) 555-0188' });
    expect(enrolled).toMatchObject({ status: 201, body: { result: { phone_number: '+14155550188' } } });
    for (const again of ['415-555-0188', '14155550188', '+1 415 555 0188']) {
      expect((await server.request('POST', '/conversation/participants', { phone_number: again })).status, again).toBe(
        409,
      );
    }
  });

  it('takes an inbound message from a national number, and names the region when a number is not valid', async () => {
    expect(
      (await server.request('POST', '/conversation/inbound', { from: '415.555.0188', text: 'hello' })).status,
    ).toBe(202);
    const refused = await server.request('POST', '/conversation/inbound', { from: '555-01', text: 'hello' });
    expect(refused).toMatchObject({
      status: 400,
      body: { code: 'invalid_phone_number', field: 'from', message: expect.stringContaining('US national number') },
    });
  });

  it('refuses a number with an extension, naming it, where it used to drop the extension silently', async () => {
    const refused = await server.request('POST', '/conversation/participants', { phone_number: '+1 415 555 0199 x12' });
    expect(refused).toMatchObject({
      status: 400,
      body: {
        code: 'invalid_phone_number',
        field: 'phone_number',
        message: 'phone_number: "+1 415 555 0199 x12" has an extension (12): messages reach a number, not an extension',
      },
    });
  });
});
