import { z } from 'zod';
import { parseJson } from './codec.ts';

/** One event as a page stores it: its seq is the page's first seq plus its index. */
export interface PageEvent {
  type: string;
  turn: number | null;
  /** Epoch milliseconds. */
  at: number;
  payload: Record<string, unknown>;
}

type Payload = Record<string, unknown>;

/**
 * Version 2 of a page (decision 020): each event is written as what changed since the one before
 * it in the page, because consecutive events repeat most of their fields (message id, role,
 * correlation id, turn, time) and a streamed reply is one event a word:
 * - a string: only the payload's `text` changed (a token); `[t, text]`: that and the time, `t` ms
 *   after the previous event;
 * - an object: `y` type, `n` turn, `t` ms after the previous event (or `a`, the time itself, when
 *   that is not a whole number of ms), `p` payload fields changed or added (added ones go after
 *   the kept ones), `r` fields removed, `c` the text is the last `c` tokens of the same message in
 *   this page, joined; or `P`, the whole payload, when the delta cannot say its field order.
 * Absent keys mean "as before"; the first event is read against an empty one. Version 1 pages
 * (a JSON array of whole events) are still read.
 */
const deltaSchema = z.object({
  y: z.string().optional(),
  n: z.number().int().nullable().optional(),
  t: z.number().int().optional(),
  a: z.number().optional(),
  p: z.record(z.string(), z.unknown()).optional(),
  r: z.array(z.string()).optional(),
  c: z.number().int().positive().optional(),
  P: z.record(z.string(), z.unknown()).optional(),
});
type Delta = z.output<typeof deltaSchema>;
const tokenSchema = z.tuple([z.number().int(), z.string()]);
const v2Schema = z.object({ v: z.literal(2), e: z.array(z.union([z.string(), tokenSchema, deltaSchema])).min(1) });
type Element = z.output<typeof v2Schema>['e'][number];
const v1Schema = z
  .array(
    z.object({
      type: z.string(),
      turn: z.number().int().nullable(),
      at: z.number(),
      payload: z.record(z.string(), z.unknown()),
    }),
  )
  .min(1);
const pageSchema = z.union([v2Schema, v1Schema]);

const EMPTY: PageEvent = { type: '', turn: null, at: 0, payload: {} };

/** A text at least this long is worth a reference to the tokens it was streamed as. */
const MIN_JOINED_TEXT = 16;

export function encodePage(events: readonly PageEvent[]): string {
  const tokens = new TokenTexts();
  let previous = EMPTY;
  const encoded = events.map((written) => {
    const event = asStored(written);
    const element = encodeEvent(previous, event, tokens);
    tokens.saw(event);
    previous = event;
    return element;
  });
  return JSON.stringify({ v: 2, e: encoded });
}

export function decodePage(text: string): PageEvent[] {
  const page = parseJson(pageSchema, text, 'event page');
  if (Array.isArray(page)) return page;
  const tokens = new TokenTexts();
  let previous = EMPTY;
  return page.e.map((element, index) => {
    const event = decodeEvent(previous, element, tokens, index);
    tokens.saw(event);
    previous = event;
    return event;
  });
}

function encodeEvent(previous: PageEvent, event: PageEvent, tokens: TokenTexts): Element {
  const changes = payloadDelta(previous.payload, event.payload);
  const after = event.at - previous.at;
  // A whole number of ms that gives the time back exactly (a fraction, or a huge gap, would not).
  const relative = Number.isSafeInteger(after) && previous.at + after === event.at;
  const sameEvent = event.type === previous.type && event.turn === previous.turn && relative;
  if (sameEvent && changes && isTextOnly(changes, previous.payload)) {
    const text = changes.p.text as string;
    return after === 0 ? text : [after, text];
  }
  const delta: Delta = {};
  if (event.type !== previous.type) delta.y = event.type;
  if (event.turn !== previous.turn) delta.n = event.turn;
  if (!relative) delta.a = event.at;
  else if (after !== 0) delta.t = after;
  if (!changes) {
    delta.P = event.payload;
    return delta;
  }
  if (Object.hasOwn(changes.p, 'text') && Object.hasOwn(previous.payload, 'text')) {
    const joined = tokens.joinedCount(event.payload);
    if (joined !== null) {
      delete changes.p.text;
      changes.count -= 1;
      delta.c = joined;
    }
  }
  if (changes.count > 0) delta.p = changes.p;
  if (changes.r) delta.r = changes.r;
  return delta;
}

interface Changes {
  /** The fields changed or added, in the payload's order. */
  p: Payload;
  count: number;
  /** The fields removed. */
  r?: string[];
}

/** The event as its JSON holds it: a field JSON leaves out (undefined, a function) is no field. */
function asStored(event: PageEvent): PageEvent {
  const keys = Object.keys(event.payload);
  if (keys.every((key) => isJsonValue(event.payload[key]))) return event;
  const payload: Payload = {};
  for (const key of keys) if (isJsonValue(event.payload[key])) put(payload, key, event.payload[key]);
  return { ...event, payload };
}

const isJsonValue = (value: unknown) => value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';

/** A token: nothing but a text the event before had too changed. */
function isTextOnly(changes: Changes, previous: Payload): boolean {
  return changes.count === 1 && !changes.r && typeof changes.p.text === 'string' && Object.hasOwn(previous, 'text');
}

/**
 * The fields of `next` that differ from `previous` and the ones it dropped; null when the fields'
 * order is not "kept ones in their order, then added ones".
 */
function payloadDelta(previous: Payload, next: Payload): Changes | null {
  const before = Object.keys(previous);
  const after = Object.keys(next);
  if (before.length !== after.length || before.some((key, index) => key !== after[index])) {
    const kept = before.filter((key) => Object.hasOwn(next, key));
    const added = after.filter((key) => !Object.hasOwn(previous, key));
    if ([...kept, ...added].some((key, index) => key !== after[index])) return null;
  }
  const changes: Changes = { p: {}, count: 0 };
  for (const key of after)
    if (!Object.hasOwn(previous, key) || previous[key] !== next[key]) {
      put(changes.p, key, next[key]);
      changes.count += 1;
    }
  if (before.length !== after.length || changes.count > 0) {
    const removed = before.filter((key) => !Object.hasOwn(next, key));
    if (removed.length > 0) changes.r = removed;
  }
  return changes;
}

function decodeEvent(previous: PageEvent, element: Element, tokens: TokenTexts, index: number): PageEvent {
  if (typeof element === 'string' || Array.isArray(element)) {
    if (!Object.hasOwn(previous.payload, 'text')) throw badPage(index, 'a text change without a text before it');
    const [after, text] = typeof element === 'string' ? [0, element] : element;
    return { ...previous, at: previous.at + after, payload: { ...previous.payload, text } };
  }
  const payload = element.P ?? applyDelta(previous.payload, element);
  if (element.c !== undefined) {
    const joined = tokens.join(payload, element.c);
    if (joined === null) throw badPage(index, `fewer than ${element.c} tokens of its message before it`);
    payload.text = joined;
  }
  return {
    type: element.y ?? previous.type,
    turn: element.n === undefined ? previous.turn : element.n,
    at: element.a ?? previous.at + (element.t ?? 0),
    payload,
  };
}

function applyDelta(previous: Payload, delta: Delta): Payload {
  const removed = new Set(delta.r ?? []);
  const payload: Payload = {};
  for (const key of Object.keys(previous)) if (!removed.has(key)) put(payload, key, previous[key]);
  for (const [key, value] of Object.entries(delta.p ?? {})) put(payload, key, value);
  return payload;
}

/** A field as JSON.parse makes it: `__proto__` too is a field, not the prototype. */
function put(payload: Payload, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(payload, key, { value, enumerable: true, writable: true, configurable: true });
  else payload[key] = value;
}

function badPage(index: number, problem: string): Error {
  return new Error(`stored event page does not match its schema: event ${index} is ${problem}`);
}

/**
 * The texts of each message's tokens in a page so far: what a `final` (or any later event of the
 * message) may refer to instead of repeating them, as the last so many of them.
 */
class TokenTexts {
  readonly #byMessage = new Map<string, string[]>();

  saw(event: PageEvent): void {
    const { messageId, text } = event.payload;
    if (event.type !== 'token' || typeof messageId !== 'string' || typeof text !== 'string') return;
    const texts = this.#byMessage.get(messageId);
    if (texts) texts.push(text);
    else this.#byMessage.set(messageId, [text]);
  }

  /** How many of the message's last tokens join into the payload's text, if some do. */
  joinedCount(payload: Payload): number | null {
    const texts = typeof payload.messageId === 'string' ? this.#byMessage.get(payload.messageId) : undefined;
    const text = payload.text;
    if (!texts || typeof text !== 'string' || text.length < MIN_JOINED_TEXT) return null;
    let start = texts.length;
    for (let length = 0; length < text.length && start > 0;) length += texts[--start]!.length;
    return texts.slice(start).join('') === text ? texts.length - start : null;
  }

  /** The message's last `count` tokens joined, or null when it has fewer. */
  join(payload: Payload, count: number): string | null {
    const texts = typeof payload.messageId === 'string' ? this.#byMessage.get(payload.messageId) : undefined;
    if (!texts || texts.length < count) return null;
    return texts.slice(texts.length - count).join('');
  }
}
