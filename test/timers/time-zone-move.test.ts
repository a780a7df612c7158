import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { habitModel, isGenerator, startHabitFixture, type HabitFixture } from './habit-fixture.ts';

// A participant's time-zone change moves their schedules (BEHAVIOR-NOTES: the zone "is stored
// and returned, and is used"): each next prompt stays on the date it was planned for.
let fixture: HabitFixture | undefined;
let server: TestServer | undefined;
afterEach(async () => {
  await fixture?.close();
  await server?.close();
  fixture = undefined;
  server = undefined;
});

const dailyPromptTimers = async (s: TestServer, id: string) =>
  ((await s.request('GET', `/conversation/participants/${id}/timers`)).body.result as any[])
    .filter((t) => t.kind === 'daily-prompt')
    .map((t) => t.due_at)
    .sort();

describe('a time-zone change', () => {
  it("after the morning prompt keeps the same day's evening prompt, in the new zone", async () => {
    fixture = await startHabitFixture({
      clockStart: '2026-06-01T12:00:00Z',
      phone: '+14165550901',
      timezone: 'America/Toronto',
      schedules: [
        { type: 'fixed', fixed_time: '08:00' },
        { type: 'fixed', fixed_time: '20:00' },
      ],
    });
    await fixture.say('set me up');
    await fixture.advance('2026-06-02T11:55:00Z'); // last night's 19:50 and this morning's 07:50 (Toronto) are out
    expect(fixture.prompts()).toHaveLength(2);
    await fixture.server.request('PUT', `/conversation/participants/${fixture.participantId}`, {
      timezone: 'America/Chicago',
    });
    // Tomorrow 07:50 and tonight 19:50, Chicago time.
    expect(await dailyPromptTimers(fixture.server, fixture.participantId)).toEqual([
      '2026-06-03T00:50:00.000Z',
      '2026-06-03T12:50:00.000Z',
    ]);
    await fixture.advance('2026-06-03T01:00:00Z');
    expect(fixture.prompts()).toHaveLength(3);
  });

  it('while a daily prompt is being written: the next one is armed in the new zone', async () => {
    let release!: () => void;
    let hold: Promise<void> | null = null;
    const scripted = habitModel([{ type: 'fixed', fixed_time: '08:00' }]);
    const provider = createScriptedProvider(async (request: LlmRequest) => {
      if (hold && isGenerator(request)) await hold;
      const response = await scripted.complete(request, {});
      return { text: response.text, toolCalls: response.toolCalls };
    });
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' }, { provider });
    const phone = '+14165550902';
    const id = (
      await server.request('POST', '/conversation/participants', { phone_number: phone, timezone: 'America/Toronto' })
    ).body.result.id;
    await waitFor(() => server!.sink.to(phone).length === 1, { what: 'greeting' });
    await server.request('POST', '/conversation/inbound', { from: phone, text: 'set me up' });
    await server.engine.idle();

    hold = new Promise((resolve) => (release = resolve));
    const calls = provider.requests.length;
    const fired = server.request('POST', '/admin/clock', { to: '2026-06-02T11:50:00Z' });
    await waitFor(() => provider.requests.length > calls, { what: 'prompt generation' });
    expect((await server.request('PUT', `/conversation/participants/${id}`, { timezone: 'Europe/Paris' })).status).toBe(
      200,
    );
    release();
    await fired;
    expect(await dailyPromptTimers(server, id)).toEqual(['2026-06-03T05:50:00.000Z']); // 07:50 in Paris
  });
});
