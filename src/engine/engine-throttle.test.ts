import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../core/clock.ts';
import type { InboxItem } from '../core/domain.ts';
import type { Store } from '../store/store.ts';
import { ConversationLeases } from './conversation-lease.ts';
import { Engine } from './engine.ts';
import type { TurnInput } from './flow.ts';
import type { OutboxDispatcher } from './outbox-dispatcher.ts';
import type { TurnRunner, TurnSummary } from './turn-runner.ts';
import type { TurnThrottle } from './turn-throttle.ts';

const logger = pino({ level: 'silent' });
const itemOf = (index: number): InboxItem => ({
  id: `in_${index}`,
  channel: 'http',
  channelMessageId: `m${index}`,
  sender: '+14165550100',
  text: `m${index}`,
  participantId: 'part_1',
  conversationId: 'conv_1',
  status: 'pending',
  error: null,
  receivedAt: new Date(index),
  processedAt: null,
});

/** An engine over an in-memory inbox whose runner answers (removes) what each turn's input names. */
function engineWith(throttle: TurnThrottle, count: number) {
  const pending = Array.from({ length: count }, (_, index) => itemOf(index));
  const inputs: Array<Extract<TurnInput, { kind: 'message' }>> = [];
  const runner = {
    async run(_conversationId: string, input: Extract<TurnInput, { kind: 'message' }>): Promise<TurnSummary> {
      inputs.push(input);
      const answered = new Set((input.batch ?? [input]).map((message) => message.inboxId));
      pending.splice(0, pending.length, ...pending.filter((item) => !answered.has(item.id)));
      return { turnId: `turn_${inputs.length}`, status: 'completed', reply: 'ok' };
    },
  } as unknown as TurnRunner;
  const store = {
    listPendingInboxOf: async (_id: string, limit: number) => pending.slice(0, limit),
  } as unknown as Store;
  const engine = new Engine({
    store,
    runner,
    clock: systemClock,
    logger,
    throttle,
    dispatcher: { kick: async () => undefined, stop: async () => undefined } as unknown as OutboxDispatcher,
    leases: new ConversationLeases({ store, shared: false, owner: 'test', now: () => new Date(), logger }),
  });
  return { engine, inputs, pending, items: [...pending] };
}

describe('Engine with a turn throttle', () => {
  it('answers each message alone while turns are free, then everything that piled up in one turn', async () => {
    const outcomes: Array<'free' | 'waited'> = ['free', 'free', 'waited'];
    const { engine, inputs, items } = engineWith({ take: async () => outcomes.shift() ?? 'free' }, 6);
    expect(await engine.processInbox(items[5]!)).toMatchObject({ turnId: 'turn_3' });
    expect(inputs.map((input) => input.batch?.map((message) => message.inboxId) ?? [input.inboxId])).toEqual([
      ['in_0'],
      ['in_1'],
      ['in_2', 'in_3', 'in_4', 'in_5'],
    ]);
    expect(inputs[2]).toMatchObject({ inboxId: 'in_5', text: 'm2\n\nm3\n\nm4\n\nm5' });
  });

  it(
    'answers a pile larger than one batch in batches of 50, in order, and says which turn answered the ' + 'message',
    async () => {
      const { engine, inputs, pending, items } = engineWith({ take: async () => 'waited' }, 60);
      expect(await engine.processInbox(items[59]!)).toMatchObject({ turnId: 'turn_2' });
      expect(inputs.map((input) => [input.batch?.[0]?.inboxId, input.inboxId, input.batch?.length])).toEqual([
        ['in_0', 'in_49', 50],
        ['in_50', 'in_59', 10],
      ]);
      expect(pending).toEqual([]);
      // A message a batch already answered: nothing more to do.
      expect(await engine.processInbox(items[10]!)).toEqual({ status: 'not-run', reason: 'answered-elsewhere' });
      expect(inputs).toHaveLength(2);
    },
  );

  it('leaves the messages pending, no turn run, when shutdown ends the wait', async () => {
    const { engine, inputs, pending, items } = engineWith(
      {
        take: (_id, signal) =>
          new Promise((_resolve, reject) =>
            signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
          ),
      },
      2,
    );
    const turn = engine.processInbox(items[1]!);
    await engine.shutdown(0);
    expect(await turn).toEqual({ status: 'not-run', reason: 'shutting-down' });
    expect([inputs.length, pending.length]).toEqual([0, 2]);
  });

  it('does not hold a shutdown for a turn that waits for the throttle: its messages stay pending', async () => {
    const { engine, inputs, pending, items } = engineWith(
      {
        take: (_id, signal, onWait) =>
          new Promise((_resolve, reject) => {
            onWait?.();
            signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          }),
      },
      2,
    );
    const turn = engine.processInbox(items[1]!);
    // A whole minute allowed for turns in progress: none is, the one queued waits for the throttle.
    await engine.shutdown(60_000);
    expect(await turn).toEqual({ status: 'not-run', reason: 'shutting-down' });
    expect([inputs.length, pending.length]).toEqual([0, 2]);
  });
});
