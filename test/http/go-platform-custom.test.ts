import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { loadCustomGenerator } from '../../src/http/go-platform/custom-generator.ts';
import { startServer } from '../../src/server.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';

// `type: "custom"` prompts (POST /send, POST /schedule): the Go server ran the generator registered
// for `custom` in code (flow.Generate), sent its text with the poll (SendPromptWithButtons) and
// answered 500 "Failed to generate message content" when it failed or none was registered. Here
// the generator is the module PLATFORM_CUSTOM_GENERATOR names. The requests are the Go test
// scripts' (run-all-tests.sh, test-schedule.sh).
const PHONE = '14165550123';
const E164 = '+14165550123';
const START = '2026-03-20T12:00:00.000Z'; // 08:00 in Toronto
const dir = mkdtempSync(join(tmpdir(), 'promptpipe-custom-'));

/** What the generator module saw, kept on globalThis: the server runs in this process. */
interface Seen {
  checked: unknown[];
  generated: Array<{ prompt: unknown; context: Record<string, unknown> }>;
}
const seen = (): Seen => (globalThis as { __customSeen?: Seen }).__customSeen!;

const GENERATOR = `
globalThis.__customSeen = { checked: [], generated: [] };
const seen = globalThis.__customSeen;
export function check(prompt) {
  seen.checked.push(prompt);
  if (prompt.state === undefined) return { field: 'state', message: 'is required by this flow' };
  if (prompt.state === 'malformed') return 'no';
}
export async function generate(prompt, { signal, ...context }) {
  seen.generated.push({ prompt, context: { ...context, signal: signal instanceof AbortSignal } });
  if (prompt.body === 'throw') throw new Error('secret database url in this message');
  if (prompt.body === 'empty') return '  ';
  if (prompt.body === 'long') return 'x'.repeat(4097);
  if (prompt.body === 'number') return 42;
  return prompt.state + ': ' + (prompt.body ?? '');
}
`;
const modulePath = join(dir, 'generator.mjs');
writeFileSync(modulePath, GENERATOR);

let server: TestServer;
let participantId: string;
beforeAll(async () => {
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: START, PLATFORM_CUSTOM_GENERATOR: modulePath });
  participantId = (
    await server.request('POST', '/conversation/participants', { phone_number: PHONE, timezone: 'America/Toronto' })
  ).body.result.id;
  await server.settle();
});
afterAll(() => server?.close());

const texts = () => server.sink.to(E164).map((message) => message.text);

describe('POST /send with type custom', () => {
  it("sends the generator's text with the 'Did you do it?' poll, through the outbox, as Go's send did", async () => {
    const before = texts().length;
    const body = { to: PHONE, type: 'custom', body: 'Custom message', state: 'initial' }; // run-all-tests.sh
    expect(await server.request('POST', '/send', body)).toMatchObject({
      status: 200,
      body: { status: 'ok', message: 'Message sent successfully' },
    });
    await server.settle();
    expect(texts().slice(before)).toEqual(['initial: Custom message', 'Did you do it?']);
    const prompt = { to: E164, type: 'custom', state: 'initial', body: 'Custom message' };
    expect(seen().checked.at(-1)).toEqual(prompt);
    expect(seen().generated.at(-1)).toEqual({
      prompt,
      context: { participantId, now: new Date(START), signal: true },
    });
    const history = await server.request('GET', `/conversation/participants/${participantId}/history`);
    expect(history.body.result.messages.at(-2)).toMatchObject({
      role: 'assistant',
      source: 'operator',
      text: 'initial: Custom message',
    });
  });

  it("refuses what the generator's check refuses (400 naming its field), and sends nothing", async () => {
    const before = server.sink.delivered.length;
    const generated = seen().generated.length;
    expect(await server.request('POST', '/send', { to: PHONE, type: 'custom', body: 'x' })).toMatchObject({
      status: 400,
      body: { status: 'error', code: 'invalid_request', field: 'state', message: 'state: is required by this flow' },
    });
    // Go's own rules and ours come first: the recipient, the fields every prompt has.
    expect(await server.request('POST', '/send', { to: 'invalid-phone', type: 'custom', state: 's' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_phone_number', field: 'to' },
    });
    expect(await server.request('POST', '/send', { to: PHONE, type: 'custom', state: 'x'.repeat(101) })).toMatchObject({
      status: 400,
      body: { field: 'state' },
    });
    await server.settle();
    expect(server.sink.delivered.length).toBe(before);
    expect(seen().generated.length).toBe(generated);
  });

  it('answers 500 custom_generator_failed (as Go did) if the generator fails; its error stays in the log', async () => {
    const before = server.sink.delivered.length;
    const failed = async (body: object, why: RegExp) => {
      const response = await server.request('POST', '/send', { to: PHONE, type: 'custom', state: 's', ...body });
      expect(response, JSON.stringify(body)).toMatchObject({
        status: 500,
        body: { status: 'error', code: 'custom_generator_failed' },
      });
      expect(response.body.message).toMatch(/^Failed to generate message content: /);
      expect(response.body.message).toMatch(why);
      expect(response.body.message).not.toMatch(/secret/);
    };
    await failed({ body: 'throw' }, /the custom generator threw$/);
    await failed({ body: 'empty' }, /returned no text/);
    await failed({ body: 'long' }, /returned 4097 bytes of text, more than 4096/);
    await failed({ body: 'number' }, /returned number, not a string/);
    await failed({ state: 'malformed' }, /check answered neither nothing nor \{field, message\}/);
    await server.settle();
    expect(server.sink.delivered.length).toBe(before);
  });
});

describe('POST /schedule with type custom', () => {
  it('is checked when scheduled and written by the generator each time it fires, with the schedule id', async () => {
    const created = await server.request('POST', '/schedule', {
      to: PHONE,
      type: 'custom',
      body: 'Custom flow message',
      state: 'initial',
      schedule: { hour: 12, minute: 0 }, // test-schedule.sh, Test 7
    });
    expect(created).toMatchObject({ status: 201, body: { status: 'ok', message: 'Scheduled successfully' } });
    const scheduleId = created.body.result as string;
    expect(
      (await server.request('POST', '/schedule', { to: PHONE, type: 'custom', schedule: { hour: 12 } })).body,
    ).toMatchObject({ status: 'error', field: 'state' });

    const before = texts().length;
    await server.request('POST', '/admin/clock', { advance: '2d' }); // 12:00 in Toronto today, and tomorrow
    await server.settle();
    expect(texts().slice(before)).toEqual([
      'initial: Custom flow message',
      'Did you do it?',
      'initial: Custom flow message',
      'Did you do it?',
    ]);
    expect(seen().generated.at(-1)?.context).toEqual({
      participantId,
      scheduleId,
      now: new Date('2026-03-21T16:00:00.000Z'),
      signal: true,
    });
    expect((await server.request('DELETE', `/timers/${scheduleId}`)).status).toBe(200);
  });
});

describe('PLATFORM_CUSTOM_GENERATOR', () => {
  it('stops start-up naming the variable when the module cannot be read, loaded, or has no generate', async () => {
    const problem = async (path: string) => {
      try {
        await loadCustomGenerator(path);
        return 'loaded';
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).issues[0];
      }
    };
    expect(await problem(join(dir, 'missing.mjs'))).toMatch(/^PLATFORM_CUSTOM_GENERATOR: cannot read .*missing\.mjs/);
    expect(await problem(dir)).toMatch(/^PLATFORM_CUSTOM_GENERATOR: cannot read .* \(not a file\)/);
    writeFileSync(join(dir, 'broken.mjs'), 'export const = ;');
    expect(await problem(join(dir, 'broken.mjs'))).toMatch(/^PLATFORM_CUSTOM_GENERATOR: cannot load .* as a module/);
    writeFileSync(join(dir, 'empty.mjs'), 'export const check = () => undefined;');
    expect(await problem(join(dir, 'empty.mjs'))).toMatch(/exports no generate\(prompt, context\) function$/);
    writeFileSync(join(dir, 'bad-check.mjs'), 'export const generate = () => "x"; export const check = 1;');
    expect(await problem(join(dir, 'bad-check.mjs'))).toMatch(/exports a check that is not a function$/);

    // The server itself: before it opens the database.
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: tempSqliteUrl(),
      PLATFORM_CUSTOM_GENERATOR: join(dir, 'missing.mjs'),
    });
    await expect(startServer(config, pino({ level: 'silent' }))).rejects.toBeInstanceOf(ConfigError);
  });

  it('the shipped example (docs/examples) loads, checks and writes', async () => {
    const example = await loadCustomGenerator('docs/examples/custom-prompt-generator.mjs');
    expect(await example.check?.({ to: E164, type: 'custom', state: 'initial' })).toBeUndefined();
    expect(await example.check?.({ to: E164, type: 'custom', state: 'nope' })).toMatchObject({ field: 'state' });
    const context = { participantId: 'p', now: new Date(), signal: new AbortController().signal };
    expect(await example.generate({ to: E164, type: 'custom', state: 'feeling', body: 'Reply soon' }, context)).toBe(
      'How are you feeling right now, from 1 (low) to 5 (great)?\n\nReply soon',
    );
  });
});

describe('a custom series after a restart without PLATFORM_CUSTOM_GENERATOR', () => {
  it('skips its sends and goes on, to send again once a generator is back', async () => {
    const url = tempSqliteUrl();
    const env = { DATABASE_URL: url, CLOCK: 'virtual', CLOCK_START: START };
    let running = await startTestServer({ ...env, PLATFORM_CUSTOM_GENERATOR: modulePath });
    await running.request('POST', '/conversation/participants', { phone_number: PHONE, timezone: 'America/Toronto' });
    const body = { to: PHONE, type: 'custom', state: 'initial', body: 'Daily', schedule: { hour: 12 } };
    const id = (await running.request('POST', '/schedule', body)).body.result as string;
    await running.close();

    running = await startTestServer(env);
    try {
      await running.request('POST', '/admin/clock', { advance: '1d' }); // today's 12:00 in Toronto
      await running.settle();
      expect(running.sink.to(E164).map((message) => message.text)).not.toContain('initial: Daily');
      expect((await running.request('GET', `/timers/${id}`)).body.next_run).toBe('2026-03-21T16:00:00.000Z');
    } finally {
      await running.close();
    }
    running = await startTestServer({ ...env, PLATFORM_CUSTOM_GENERATOR: modulePath });
    try {
      await running.request('POST', '/admin/clock', { advance: '1d' });
      await running.settle();
      expect(running.sink.to(E164).map((message) => message.text)).toEqual(['initial: Daily', 'Did you do it?']);
    } finally {
      await running.close();
    }
  });
});
