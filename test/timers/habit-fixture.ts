import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider, type ScriptedProvider, type ScriptedStep } from '../../src/llm/scripted-provider.ts';
import type { OutboundMessage } from '../../src/channels/channel.ts';
import { sayAndWait, startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

/** The scripted generator's prompt, so tests can pick the daily prompts out of the sink. */
export const PROMPT_TEXT = 'After coffee, walk around the block.';
export const FULL_PROFILE = {
  habit_domain: 'walking',
  motivational_frame: 'energy',
  prompt_anchor: 'after coffee',
  preferred_time: '08:00',
};

export const isGenerator = (request: LlmRequest) =>
  request.messages[0]?.content.startsWith('You write one short daily habit prompt') ?? false;
export const moduleOf = (request: LlmRequest) =>
  isGenerator(request) ? 'GENERATOR' : request.messages[0]?.content.includes('following up') ? 'FEEDBACK' : 'INTAKE';

/**
 * A scripted model for the habit flow on the virtual clock. "set me up" saves a complete profile and
 * creates `schedules`; "feedback now" / "intake now" move the sub-state; `onUser` may answer the
 * rest (default: a short thank-you). After tool results it says "Done!".
 */
export function habitModel(
  schedules: object[],
  onUser: (text: string) => ScriptedStep | undefined = () => undefined,
): ScriptedProvider {
  return createScriptedProvider((request) => {
    if (isGenerator(request)) return { text: PROMPT_TEXT };
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return { text: 'Done!' };
    if (last.content.startsWith('[')) return { text: 'Welcome!' };
    if (last.content === 'set me up') {
      return {
        toolCalls: [
          { name: 'save_user_profile', arguments: FULL_PROFILE },
          ...schedules.map((schedule) => ({ name: 'scheduler', arguments: { action: 'create', ...schedule } })),
        ],
      };
    }
    if (last.content === 'feedback now')
      return { toolCalls: [{ name: 'transition_state', arguments: { target_state: 'FEEDBACK' } }] };
    if (last.content === 'intake now')
      return { toolCalls: [{ name: 'transition_state', arguments: { target_state: 'INTAKE' } }] };
    return onUser(last.content) ?? { text: 'Thanks for letting me know.' };
  });
}

export interface HabitFixture {
  server: TestServer;
  provider: ScriptedProvider;
  participantId: string;
  say(text: string): Promise<string[]>;
  /** Moves the virtual clock by a duration ("5m") or to an ISO instant; every due timer fires. */
  advance(to: string): Promise<void>;
  state(): Promise<any>;
  messages(): OutboundMessage[];
  texts(): string[];
  /** Daily prompts sent so far. */
  prompts(): OutboundMessage[];
  close(): Promise<void>;
}

export interface HabitFixtureOptions {
  clockStart: string;
  phone: string;
  timezone?: string;
  schedules?: object[];
  env?: Record<string, string>;
  onUser?: (text: string) => ScriptedStep | undefined;
  /** The server's random source (random-window draws); Math.random by default. */
  random?: () => number;
}

/** A real server on the virtual clock with one enrolled participant who has been greeted. */
export async function startHabitFixture(options: HabitFixtureOptions): Promise<HabitFixture> {
  const provider = habitModel(options.schedules ?? [{ type: 'fixed', fixed_time: '08:00' }], options.onUser);
  const server = await startTestServer(
    { CLOCK: 'virtual', CLOCK_START: options.clockStart, ...options.env },
    { provider, ...(options.random ? { random: options.random } : {}) },
  );
  const { phone } = options;
  const created = await server.request('POST', '/conversation/participants', {
    phone_number: phone,
    timezone: options.timezone ?? 'America/Toronto',
  });
  if (created.status !== 201) throw new Error(`enrollment failed: ${JSON.stringify(created.body)}`);
  await waitFor(() => server.sink.to(phone).length === 1, { what: 'greeting' });
  const participantId = created.body.result.id as string;
  const messages = () => server.sink.to(phone);
  return {
    server,
    provider,
    participantId,
    say: (text) => sayAndWait(server, phone, text),
    advance: async (to) => {
      const body = /^\d{4}-/.test(to) ? { to } : { advance: to };
      const response = await server.request('POST', '/admin/clock', body);
      if (response.status !== 200) throw new Error(`clock move failed: ${JSON.stringify(response.body)}`);
    },
    state: async () => (await server.request('GET', `/conversation/participants/${participantId}/state`)).body.result,
    messages,
    texts: () => messages().map((message) => message.text),
    prompts: () => messages().filter((message) => message.text === PROMPT_TEXT),
    close: () => server.close(),
  };
}
