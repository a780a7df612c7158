import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Flow, PreparedTurn } from '../../src/engine/flow.ts';
import type { FlowModule } from '../../src/flows/flow-module.ts';
import { defineTimerKind, type TimerKind } from '../../src/timers/timer-kinds.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

const PHONE = '+14165550191';

/**
 * A flow whose message turns wait for the test to let them finish, and a timer kind that notes whether a turn was
 * running.
 */
function probeModule() {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const seen = { turnRunning: false, firings: [] as Array<{ duringTurn: boolean }> };
  const turn = (text: string, wait: boolean): PreparedTurn => ({
    module: 'probe',
    systemMessages: [],
    tools: [],
    fallbackText: text,
    run: async () => {
      seen.turnRunning = true;
      if (wait) await gate;
      seen.turnRunning = false;
      return {
        text,
        endedBy: 'reply',
        toolCalls: [],
        modelCalls: 0,
        toolRounds: 0,
        modelMs: 0,
        toolMs: 0,
        model: 'probe',
      };
    },
    finish: () => ({}),
    commit: async () => undefined,
  });
  const flow: Flow = {
    id: 'probe',
    initialState: () => ({ state: 'PROBING', subState: null }),
    subStates: [],
    greetingHint: () => 'hello',
    prepareTurn: async ({ input }) =>
      input.kind === 'message' ? turn(`got ${input.text}`, true) : turn('hello', false),
  };
  // No queue, no lock, no lease: serializing is the engine's job.
  const probeKind = defineTimerKind({
    kind: 'probe',
    payload: z.object({}),
    handle: async () => void seen.firings.push({ duringTurn: seen.turnRunning }),
  });
  const module: FlowModule = {
    id: 'probe',
    load: () => ({ start: async () => ({ flow, timerKinds: () => [probeKind as unknown as TimerKind<never>] }) }),
  };
  return { module, seen, release };
}

describe('a timer kind of a flow module', () => {
  const probe = probeModule();
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({}, { flowModules: [probe.module] });
  });
  afterAll(() => server.close());

  it("fires in its conversation's queue: never while a message turn of that conversation runs", async () => {
    const participant = (await server.request('POST', '/conversation/participants', { phone_number: PHONE })).body
      .result;
    await server.sink.waitFor(1);
    const conversation = (await server.store.findConversationByParticipant(participant.id))!;
    expect((await server.request('POST', '/conversation/inbound', { from: PHONE, text: 'hi' })).status).toBe(202);
    await waitFor(() => probe.seen.turnRunning, { what: 'the message turn running' });

    const now = server.clock.now();
    await server.store.scheduleTimer({
      id: 'probe-1',
      kind: 'probe',
      conversationId: conversation.id,
      participantId: participant.id,
      dedupKey: 'probe:1',
      dueAt: now,
      payload: {},
      createdAt: now,
    });
    await waitFor(async () => (await server.store.getTimer('probe-1'))?.status === 'running', {
      what: 'the worker claiming the timer',
    });
    probe.release();

    await waitFor(async () => (await server.store.getTimer('probe-1'))?.status === 'done', { what: 'the timer done' });
    expect(probe.seen.firings).toEqual([{ duringTurn: false }]);
    await server.sink.waitFor(2);
    expect(server.sink.to(PHONE).map((message) => message.text)).toEqual(['hello', 'got hi']);
    // The firing is a turn of the conversation like the others, after the message's: its record
    // says so, though the kind wrote none itself.
    const turns = await server.store.listTurns(conversation.id);
    expect(turns.map(({ trigger, module, status }) => [trigger, module, status])).toEqual([
      ['greeting', 'probe', 'completed'],
      ['message', 'probe', 'completed'],
      ['timer', 'probe', 'completed'],
    ]);
    expect(turns[2]!.attempts).toBe(1);
  });
});
