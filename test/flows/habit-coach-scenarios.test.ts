import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { sayAndWait, startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

type Step = { text?: string; toolCalls?: Array<{ name: string; arguments: unknown }> };

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const PHONE = '+14165550140';
const last = (request: LlmRequest) => request.messages.at(-1)!;
const module = (request: LlmRequest) =>
  request.messages[0]?.content.includes('intake conversation')
    ? 'INTAKE'
    : request.messages[0]?.content.includes('following up')
      ? 'FEEDBACK'
      : 'GENERATOR';
const toolResults = (request: LlmRequest) =>
  request.messages.filter((message) => message.role === 'tool').map((message) => message.content);

/**
 * A scripted model for the habit flow: `onUser` decides what to do with a participant message;
 * once tool results are in, it answers with `afterTools` (or a default).
 */
function habitModel(
  onUser: (text: string, request: LlmRequest) => Step,
  afterTools: (results: string[]) => string = () => 'Got it!',
) {
  return createScriptedProvider((request) => {
    if (module(request) === 'GENERATOR') return { text: 'After breakfast, put on your shoes and walk for 5 minutes.' };
    const message = last(request);
    if (message.role === 'tool') return { text: afterTools(toolResults(request)) };
    return onUser(message.content, request);
  });
}

async function start(provider: ReturnType<typeof createScriptedProvider>, env: Record<string, string> = {}) {
  server = await startTestServer(env, { provider });
  const created = await server.request('POST', '/conversation/participants', {
    phone_number: PHONE,
    name: 'Alice',
    timezone: 'America/Toronto',
  });
  await waitFor(() => server!.sink.to(PHONE).length >= 1, { what: 'greeting' });
  return created.body.result.id as string;
}

const say = (text: string) => sayAndWait(server!, PHONE, text);

const state = async (id: string) =>
  (await server!.request('GET', `/conversation/participants/${id}/state`)).body.result;

describe('habit coaching scenarios (spec 002 §9)', () => {
  it('1: completes intake over several turns: profile → prompt → schedule → FEEDBACK', async () => {
    const provider = habitModel((text) => {
      if (text.startsWith('[')) return { text: 'Hi Alice! What habit would you like to build?' };
      if (text === 'walking')
        return { toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'walking' } }] };
      if (text === 'for my heart')
        return { toolCalls: [{ name: 'save_user_profile', arguments: { motivational_frame: 'heart health' } }] };
      if (text === 'after breakfast around 8') {
        return {
          toolCalls: [
            { name: 'save_user_profile', arguments: { prompt_anchor: 'after breakfast', preferred_time: '08:00' } },
          ],
        };
      }
      return {
        text: 'All set! You will hear from me every morning.',
        toolCalls: [
          { name: 'generate_habit_prompt', arguments: { delivery_mode: 'immediate' } },
          { name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '08:00' } },
          { name: 'transition_state', arguments: { target_state: 'FEEDBACK' } },
        ],
      };
    });
    const id = await start(provider);
    expect(server!.sink.to(PHONE)[0]?.text).toMatch(/Hi Alice/);
    await say('walking');
    await say('for my heart');
    await say('after breakfast around 8');
    expect(await say('yes please')).toEqual(['All set! You will hear from me every morning.']);

    const result = await state(id);
    expect(result.sub_state).toBe('FEEDBACK');
    expect(result.profile).toMatchObject({
      habit_domain: 'walking',
      motivational_frame: 'heart health',
      prompt_anchor: 'after breakfast',
      preferred_time: '08:00',
      last_habit_prompt: 'After breakfast, put on your shoes and walk for 5 minutes.',
    });
    expect(result.schedules).toEqual([
      expect.objectContaining({ type: 'fixed', fixed_time: '08:00', timezone: 'America/Toronto', prep_minutes: 10 }),
    ]);

    const turns = await server!.store.listTurns(result.conversation_id);
    expect(turns.at(-1)).toMatchObject({ module: 'INTAKE', toolRounds: 1, modelCalls: 1 });
    const calls = await server!.store.listToolCalls(result.conversation_id, { turnIds: [turns.at(-1)!.id] });
    expect(calls.map((call) => [call.name, call.status])).toEqual([
      ['generate_habit_prompt', 'ok'],
      ['scheduler', 'ok'],
      ['transition_state', 'ok'],
    ]);
    // The intake module saw the profile it had built in its context block.
    const lastIntake = provider.requests.filter((request) => module(request) === 'INTAKE').at(-1)!;
    expect(lastIntake.messages[1]?.content).toMatch(/prompt_anchor: after breakfast/);
  });

  it('2 and 10: a tool error reaches the model as a result, and the model repairs by moving to intake', async () => {
    const provider = habitModel(
      (text) => {
        if (text.startsWith('[')) return { text: 'Hello!' };
        if (text === 'go to feedback')
          return { toolCalls: [{ name: 'transition_state', arguments: { target_state: 'FEEDBACK' } }] };
        return { toolCalls: [{ name: 'generate_habit_prompt', arguments: { delivery_mode: 'immediate' } }] };
      },
      (results) =>
        results.some((result) => result.includes('missing prompt_anchor'))
          ? 'Let me ask a couple of questions first.'
          : 'OK',
    );
    const id = await start(provider);
    await say('go to feedback');
    expect((await state(id)).sub_state).toBe('FEEDBACK');
    expect(await say('send me a prompt')).toEqual(['Let me ask a couple of questions first.']);
    const feedbackRequest = provider.requests.filter((request) => module(request) === 'FEEDBACK').at(-1)!;
    expect(toolResults(feedbackRequest)[0]).toMatch(
      /^Error: cannot generate a prompt yet: the profile is missing prompt_anchor and preferred_time/,
    );
  });

  it(
    '2: the feedback module reads the same profile status as intake: known fields, what is missing, and to go ' +
      'back to intake',
    async () => {
      const provider = habitModel((text) => {
        if (text.startsWith('[')) return { text: 'Hello!' };
        if (text === 'walking after breakfast')
          return {
            toolCalls: [
              { name: 'save_user_profile', arguments: { habit_domain: 'walking', prompt_anchor: 'after breakfast' } },
            ],
          };
        if (text === 'go to feedback')
          return { toolCalls: [{ name: 'transition_state', arguments: { target_state: 'FEEDBACK' } }] };
        return { text: 'OK' };
      });
      await start(provider);
      await say('walking after breakfast');
      await say('hello');
      await say('go to feedback');
      await say('how am I doing?');
      const context = (wanted: string) =>
        provider.requests.filter((request) => module(request) === wanted).at(-1)!.messages[1]!.content;
      const profileStatus = (text: string) => /Known profile fields:[\s\S]*?Successes: \d+\./.exec(text)?.[0];

      const feedback = context('FEEDBACK');
      expect(feedback).toMatch(/- prompt_anchor: after breakfast/);
      expect(feedback).toMatch(/Still missing: motivational_frame, preferred_time\./);
      expect(feedback).toMatch(/Habit prompts need preferred_time[^\n]*move back to intake with transition_state/);
      expect(profileStatus(feedback)).toBeDefined();
      expect(profileStatus(feedback)).toBe(profileStatus(context('INTAKE')));
    },
  );

  it('4: a feedback turn records a barrier and uses the feedback module', async () => {
    const provider = habitModel((text) => {
      if (text.startsWith('[')) return { text: 'Hello!' };
      if (text === 'feedback now')
        return { toolCalls: [{ name: 'transition_state', arguments: { target_state: 'FEEDBACK' } }] };
      return {
        text: 'Rain is tough. Try a walk indoors?',
        toolCalls: [
          { name: 'save_user_profile', arguments: { last_barrier: 'it rained', last_tweak: 'walk indoors' } },
        ],
      };
    });
    const id = await start(provider);
    await say('feedback now');
    expect(await say('I skipped it, it rained')).toEqual(['Rain is tough. Try a walk indoors?']);
    expect((await state(id)).profile).toMatchObject({ last_barrier: 'it rained', last_tweak: 'walk indoors' });
    const turns = await server!.store.listTurns((await state(id)).conversation_id);
    expect(turns.at(-1)?.module).toBe('FEEDBACK');
    // Feedback may regenerate the prompt after a tweak, and its prompt says so (BEHAVIOR-NOTES "Modules and tools").
    const feedbackRequest = provider.requests.filter((request) => module(request) === 'FEEDBACK').at(-1)!;
    expect(feedbackRequest.tools?.map((tool) => tool.name)).toEqual([
      'save_user_profile',
      'scheduler',
      'generate_habit_prompt',
      'transition_state',
    ]);
  });

  it('5: a delayed transition leaves the sub-state alone and records a pending timer', async () => {
    const provider = habitModel((text) =>
      text.startsWith('[')
        ? { text: 'Hello!' }
        : {
            text: 'Talk soon.',
            toolCalls: [{ name: 'transition_state', arguments: { target_state: 'FEEDBACK', delay_minutes: 30 } }],
          },
    );
    const id = await start(provider);
    await say('later');
    const result = await state(id);
    expect(result.sub_state).toBe('INTAKE');
    expect(result.pending_timers).toEqual([
      expect.objectContaining({ kind: 'state-transition', key: expect.stringContaining(id) }),
    ]);
    const due = new Date(result.pending_timers[0].due_at).getTime();
    expect(due - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(due - Date.now()).toBeLessThanOrEqual(30 * 60_000);
  });

  it('9: debug mode sends a separate diagnostic message the model never sees', async () => {
    const provider = habitModel((text) =>
      text.startsWith('[')
        ? { text: 'Hello!' }
        : { toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'sleep' } }] },
    );
    const id = await start(provider);
    await server!.request('PUT', `/conversation/participants/${id}`, { debug: true });
    const replies = await say('sleep better');
    await waitFor(() => server!.sink.to(PHONE).length >= 3);
    const all = server!.sink.to(PHONE).map((message) => message.text);
    expect(replies[0]).toBe('Got it!');
    expect(all.at(-1)).toMatch(
      /^\[debug\] module INTAKE[\s\S]*habit_domain=sleep[\s\S]*save_user_profile: habit_domain/,
    );
    await say('again');
    const lastRequest = provider.requests.filter((request) => module(request) === 'INTAKE').at(-1)!;
    expect(lastRequest.messages.some((message) => message.content.includes('[debug]'))).toBe(false);
  });

  it('routes an operator-forced sub-state and records it in the transcript', async () => {
    const provider = habitModel((text) => (text.startsWith('[') ? { text: 'Hello!' } : { text: 'ok' }));
    const id = await start(provider);
    const forced = await server!.request('POST', `/conversation/participants/${id}/state`, {
      sub_state: 'FEEDBACK',
      reason: 'study protocol',
    });
    expect(forced).toMatchObject({ status: 200, body: { result: { sub_state: 'FEEDBACK' } } });
    expect(
      await server!.request('POST', `/conversation/participants/${id}/state`, { sub_state: 'COORDINATOR' }),
    ).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', field: 'sub_state' },
    });
    await say('hi');
    const turns = await server!.store.listTurns((await state(id)).conversation_id);
    expect(turns.at(-1)?.module).toBe('FEEDBACK');
    const history = await server!.request('GET', `/conversation/participants/${id}/history`);
    expect(
      history.body.result.messages.some(
        (message: { source: string; text: string }) =>
          message.source === 'operator' && /study protocol/.test(message.text),
      ),
    ).toBe(true);
  });
});
