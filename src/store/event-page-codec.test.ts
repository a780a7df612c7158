import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodePage, encodePage, type PageEvent } from './event-page-codec.ts';

/** What a page must give back: the events as JSON would, fields in the same order. */
const asJson = (events: readonly PageEvent[]) => events.map((event) => JSON.stringify(event));

// Not `__proto__`: zod's records drop it when a page is read (as they did from version 1 pages).
const FIELDS = ['messageId', 'role', 'correlationId', 'text', 'data', 'c', 'P', 'n'] as const;

const value = (field: string) =>
  field === 'messageId'
    ? fc.constantFrom('msg_a', 'msg_b', null)
    : field === 'text'
      ? fc.oneof(fc.constantFrom('', 'Done.', 'word '), fc.string({ maxLength: 30 }))
      : fc.oneof(fc.constantFrom('assistant', 'system', null, undefined), fc.jsonValue({ maxDepth: 2 }));

const payload = fc
  .shuffledSubarray([...FIELDS])
  .chain((fields) => fc.tuple(...fields.map((field) => value(field).map((v) => [field, v] as const))))
  .map((entries) => {
    const result: Record<string, unknown> = {};
    for (const [field, v] of entries)
      Object.defineProperty(result, field, { value: v, enumerable: true, writable: true, configurable: true });
    return result;
  });

const anyEvent = fc.record({
  type: fc.constantFrom('token', 'final', 'status', 'speaking', 'error'),
  turn: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
  at: fc.oneof(
    fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_100 }),
    fc.constantFrom(-8.64e15, 8.64e15, 1_700_000_000_000.5),
  ),
  payload,
});

/** A reply as the engine streams it: its tokens, then a final whose text the last of them join into. */
const streamedReply = fc
  .record({
    messageId: fc.constantFrom('msg_a', 'msg_b'),
    words: fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 12 }),
    narrated: fc.nat(),
    turn: fc.integer({ min: 0, max: 3 }),
  })
  .map(({ messageId, words, narrated, turn }): PageEvent[] => {
    const envelope = { messageId, role: 'assistant', correlationId: null };
    const reply = words.slice(narrated % words.length).join('');
    return [
      ...words.map((text, index) => ({
        type: 'token',
        turn,
        at: 1_700_000_000_000 + index,
        payload: { ...envelope, text },
      })),
      { type: 'final', turn, at: 1_700_000_000_050, payload: { ...envelope, text: reply, data: { messageSeq: 4 } } },
    ];
  });

const page = fc
  .array(
    fc.oneof(
      anyEvent.map((event) => [event]),
      streamedReply,
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((runs) => runs.flat());

/** One turn of the habit coach with a reply streamed a word at a time, as a page holds it. */
function streamedTurn(words: number): PageEvent[] {
  const at = 1_795_949_256_736;
  const envelope = { messageId: 'msg_01a226eae45b85ef29a1493e925bab89', role: 'assistant', correlationId: null };
  const status = (correlationId: string, text: string, data: object) => ({
    type: 'status',
    turn: 5,
    at,
    payload: { ...envelope, role: 'system', correlationId, text, data },
  });
  const tokens = Array.from({ length: words }, (_, index) => `word${index} `);
  return [
    status('call_1', 'Noting that down…', { tool: 'save_user_profile', phase: 'started' }),
    status('call_1', 'Done.', { tool: 'save_user_profile', phase: 'finished', status: 'ok', durationMs: 3 }),
    { type: 'speaking', turn: 5, at: at + 9, payload: { ...envelope, data: { speaking: true } } },
    ...tokens.map((text, index) => ({
      type: 'token',
      turn: 5,
      at: at + 10 + index * 31,
      payload: { ...envelope, text },
    })),
    {
      type: 'final',
      turn: 5,
      at: at + 2_000,
      payload: {
        ...envelope,
        text: tokens.join(''),
        data: { kind: 'text', source: 'model', messageSeq: 10, poll: null },
      },
    },
    { type: 'speaking', turn: 5, at: at + 2_000, payload: { ...envelope, messageId: null, data: { speaking: false } } },
  ];
}

describe('event pages', () => {
  it('give back every event as written, fields in order, whatever the events', () => {
    fc.assert(
      fc.property(page, (events) => {
        expect(asJson(decodePage(encodePage(events)))).toEqual(asJson(events));
      }),
      { numRuns: 2_000 },
    );
  });

  it('write a streamed turn in a fraction of the whole events', () => {
    const events = streamedTurn(45);
    const encoded = encodePage(events);
    expect(asJson(decodePage(encoded))).toEqual(asJson(events));
    // Each token is its time and text, the final refers to them.
    expect(encoded.length).toBeLessThan(JSON.stringify(events).length / 4);
    expect(encoded).not.toContain(events.at(-2)!.payload.text);
  });

  it('refer to the tokens of the last round of a reply, and keep fields in order where they cannot', () => {
    const envelope = { messageId: 'msg_a', role: 'assistant', correlationId: null };
    const event = (type: string, payload: Record<string, unknown>, at = 1_700_000_000_000) => ({
      type,
      turn: 1,
      at,
      payload,
    });
    const reply = ['Your walk is ', 'saved for ', 'tomorrow morning.'];
    const later = { messageId: 'msg_b', role: 'assistant' };
    const events = [
      event('token', { ...envelope, text: 'Let me note that down. ' }),
      event('status', { ...envelope, role: 'system', correlationId: 'call_1', text: 'Done.' }, 1_700_000_000_020),
      ...reply.map((text, index) => event('token', { ...envelope, text }, 1_700_000_000_040 + index)),
      event('final', { ...envelope, text: reply.join(''), data: { messageSeq: 3 } }),
      event('final', { ...envelope, text: reply.join(''), data: { messageSeq: 3 }, extra: 1 }),
      event('token', { ...later, text: 'A second reply, ' }),
      event('token', { ...later, text: 'streamed.' }),
      event('speaking', later),
      event('final', { ...later, text: 'A second reply, streamed.', data: { messageSeq: 5 } }),
      event('note', { seen: 1 }),
      event('note', { seen: 1, text: 'only a text added' }),
    ];
    const encoded = encodePage(events);
    expect(asJson(decodePage(encoded))).toEqual(asJson(events));
    expect(encoded).not.toContain(reply.join(''));
  });

  it('still read version 1 pages, whole events in an array', () => {
    const events = streamedTurn(3);
    expect(asJson(decodePage(JSON.stringify(events)))).toEqual(asJson(events));
  });

  it('refuse a page that refers to what it does not hold', () => {
    expect(() => decodePage('{"v":2,"e":["word"]}')).toThrow(/event 0 is a text change without a text before it/);
    expect(() => decodePage('{"v":2,"e":[{"y":"x"},[5,"word"]]}')).toThrow(/event 1 is a text change without/);
    expect(() =>
      decodePage('{"v":2,"e":[{"y":"token","P":{"messageId":"m","text":"a"}},{"y":"final","c":2}]}'),
    ).toThrow(/event 1 is fewer than 2 tokens of its message before it/);
    expect(() => decodePage('{"v":3,"e":[]}')).toThrow(/stored event page does not match its schema/);
    expect(() => decodePage('[]')).toThrow(/stored event page does not match its schema/);
  });
});
