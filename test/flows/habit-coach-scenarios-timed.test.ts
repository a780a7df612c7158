import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider, type ScriptedStep } from '../../src/llm/scripted-provider.ts';
import { sayAndWait, startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// Spec 002 §9 scenarios 3, 7, 12 and the tool-argument errors, through the HTTP API with a
// scripted model and the virtual clock.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const PHONE = '+14165550240';
const T0 = '2026-06-01T12:00:00Z';
const isGenerator = (request: LlmRequest) =>
  request.messages[0]?.content.startsWith('You write one short daily habit prompt');
const moduleOf = (request: LlmRequest) =>
  request.messages[0]?.content.includes('following up') ? 'FEEDBACK' : 'INTAKE';
const FULL_PROFILE = {
  habit_domain: 'walking',
  motivational_frame: 'energy',
  prompt_anchor: 'after coffee',
  preferred_time: '08:00',
};

/** `onUser` answers participant messages; after tool results the model says "Done." */
function model(onUser: (text: string, request: LlmRequest) => ScriptedStep) {
  return createScriptedProvider((request) => {
    if (isGenerator(request)) return { text: 'After coffee, walk to the corner and back.' };
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return { text: 'Done.' };
    if (last.content.startsWith('[')) return { text: 'Welcome!' };
    return onUser(last.content, request);
  });
}

async function start(provider: ReturnType<typeof createScriptedProvider>) {
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: T0 }, { provider });
  const created = await server.request('POST', '/conversation/participants', {
    phone_number: PHONE,
    timezone: 'America/Toronto',
  });
  await waitFor(() => server!.sink.to(PHONE).length === 1, { what: 'greeting' });
  return created.body.result.id as string;
}

const say = (text: string) => sayAndWait(server!, PHONE, text);

const advance = (advance: string) => server!.request('POST', '/admin/clock', { advance });
const state = async (id: string) =>
  (await server!.request('GET', `/conversation/participants/${id}/state`)).body.result;
const toolCalls = async (id: string) =>
  (
    (await server!.request('GET', `/conversation/participants/${id}/turns?limit=100`)).body.result as Array<{
      tool_calls: Array<{ name: string; status: string; result: string }>;
    }>
  ).flatMap((turn) => turn.tool_calls);
const texts = () => server!.sink.to(PHONE).map((message) => message.text);

describe('habit coaching scenarios on the virtual clock', () => {
  it(
    '3: generate_habit_prompt needs anchor and time, then generates with the tone guide and stores the ' + 'prompt',
    async () => {
      const provider = model((text) => {
        if (text === 'prompt please')
          return { toolCalls: [{ name: 'generate_habit_prompt', arguments: { delivery_mode: 'immediate' } }] };
        if (text === 'profile')
          return {
            toolCalls: [
              {
                name: 'save_user_profile',
                arguments: { ...FULL_PROFILE, tone_tags: ['concise'], tone_update_source: 'explicit' },
              },
            ],
          };
        if (text === 'scheduled one')
          return {
            toolCalls: [
              {
                name: 'generate_habit_prompt',
                arguments: { delivery_mode: 'scheduled', personalization_notes: 'mention the dog' },
              },
            ],
          };
        return { text: 'OK' };
      });
      const id = await start(provider);
      await say('prompt please');
      const [refused] = await toolCalls(id);
      expect(refused).toMatchObject({ name: 'generate_habit_prompt', status: 'error' });
      expect(refused!.result).toMatch(/prompt_anchor/);
      expect(refused!.result).toMatch(/preferred_time/);
      expect(texts().at(-1)).toBe('Done.'); // the conversation goes on

      await say('profile');
      await say('scheduled one');
      const generator = provider.requests.filter(isGenerator);
      expect(generator).toHaveLength(1);
      expect(
        generator[0]!.messages.some((message) => message.role === 'system' && message.content.startsWith('Tone guide')),
      ).toBe(true);
      expect(generator[0]!.messages.at(-1)!.content).toContain('mention the dog');
      expect((await state(id)).profile.last_habit_prompt).toBe('After coffee, walk to the corner and back.');
    },
  );

  it('7: the reminder fires once after 5 h with no reply; a late reply is handled by the feedback module', async () => {
    const provider = model((text) =>
      text === 'set me up'
        ? {
            toolCalls: [
              { name: 'save_user_profile', arguments: FULL_PROFILE },
              { name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '08:00' } },
            ],
          }
        : { text: 'Thanks for telling me.' },
    );
    const id = await start(provider);
    await say('set me up');
    await advance('1d'); // the 07:50 prompt (11:50Z) is sent; the clock stops at 12:00Z
    await advance('5h');
    expect(texts().filter((text) => /check-in/i.test(text))).toHaveLength(1);
    await say('sorry, I forgot yesterday');
    expect(moduleOf(provider.requests.at(-1)!)).toBe('FEEDBACK');
    await advance('6h');
    expect(texts().filter((text) => /check-in/i.test(text))).toHaveLength(1);
    expect((await state(id)).sub_state).toBe('FEEDBACK');
  });

  it('12: implicit tone proposals are rate-limited for 3 min and smoothed; explicit ones apply at once', async () => {
    const propose = (source: 'implicit' | 'explicit') => ({
      toolCalls: [
        {
          name: 'save_user_profile',
          arguments: { tone_tags: ['concise', 'warm_supportive'], tone_update_source: source, tone_confidence: 0.9 },
        },
      ],
    });
    const provider = model((text) =>
      text === 'explicit' ? propose('explicit') : text === 'hello' ? { text: 'Hi.' } : propose('implicit'),
    );
    const id = await start(provider);
    const now = new Date(T0);
    const profile = await server!.store.getProfile(id);
    await server!.store.saveProfile({
      ...(profile ?? (await import('../../src/core/profile.ts')).emptyProfile(id, now)),
      tone: { scores: { concise: 0.8 }, active: ['concise'], lastUpdatedAt: new Date(now.getTime() - 2 * 60_000) },
    });

    await say('implicit');
    expect((await toolCalls(id)).at(-1)!.result).toMatch(/implicit tone updates are limited to one every 3 minutes/);
    expect((await state(id)).profile.tone.scores).toEqual({ concise: 0.8 });

    await advance('2m'); // 4 minutes after the last update
    await say('implicit');
    expect((await state(id)).profile.tone).toMatchObject({
      scores: { concise: 0.83, warm_supportive: 0.15 },
      active: ['concise'],
    });

    await say('explicit'); // no wait: explicit proposals are never rate-limited
    expect((await state(id)).profile.tone).toMatchObject({
      scores: { concise: 1, warm_supportive: 1 },
      active: ['concise', 'warm_supportive'],
    });
    await say('hello');
    const guide = provider.requests
      .at(-1)!
      .messages.find((message) => message.role === 'system' && message.content.startsWith('Tone guide'));
    expect(guide?.content).toMatch(/short/);
    expect(guide?.content).toMatch(/warm/);
  });

  it(
    'every tool argument error reaches the model as a result naming the problem, and the conversation ' + 'continues',
    async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ name: 'scheduler', arguments: { action: 'weekly' } }, /action/],
        [{ name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '25:00' } }, /fixed_time/],
        [{ name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '7am' } }, /fixed_time/],
        [
          {
            name: 'scheduler',
            arguments: { action: 'create', type: 'random', random_start_time: '11:00', random_end_time: '09:00' },
          },
          /random_end_time|after/,
        ],
        [{ name: 'scheduler', arguments: { action: 'delete', schedule_id: 'sch_nope' } }, /sch_nope/],
        [
          {
            name: 'scheduler',
            arguments: { action: 'create', type: 'fixed', fixed_time: '08:00', timezone: 'Mars/Base' },
          },
          /Mars\/Base/,
        ],
        [{ name: 'transition_state', arguments: { target_state: 'DONE' } }, /target_state/],
      ];
      const provider = model((text) => ({
        toolCalls: [cases[Number(text)]![0] as { name: string; arguments: unknown }],
      }));
      const id = await start(provider);
      for (const [index] of cases.entries()) await say(String(index));
      const calls = await toolCalls(id);
      expect(calls).toHaveLength(cases.length);
      calls.forEach((call, index) => {
        expect(call.status, call.result).toBe('error');
        expect(call.result).toMatch(cases[index]![1]);
      });
      expect(texts().filter((text) => text === 'Done.')).toHaveLength(cases.length);
    },
  );
});
