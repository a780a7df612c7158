import { describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../llm/scripted-provider.ts';
import { extractRecallQuery, parseRecallQuery } from './recall.ts';

describe('parseRecallQuery', () => {
  it('reads bare or fenced JSON', () => {
    expect(parseRecallQuery('{"keywords": ["dentist"]}')).toEqual({ keywords: ['dentist'] });
    expect(parseRecallQuery('Sure:\n```json\n{"keywords": ["a"], "from": "2026-11-20T08:00:00Z"}\n```')).toEqual({
      keywords: ['a'],
      from: new Date('2026-11-20T08:00:00Z'),
    });
  });

  it('takes a date alone as the whole day, and a time without offset as UTC', () => {
    expect(parseRecallQuery('{"keywords": ["x"], "from": "2026-11-22", "to": "2026-11-22"}')).toEqual({
      keywords: ['x'],
      from: new Date('2026-11-22T00:00:00.000Z'),
      to: new Date('2026-11-22T23:59:59.999Z'),
    });
    expect(parseRecallQuery('{"keywords": ["x"], "to": "2026-11-22T15:30"}')).toEqual({
      keywords: ['x'],
      to: new Date('2026-11-22T15:30:00Z'),
    });
  });

  it('keeps what is usable: empty or non-ISO bounds dropped, keywords trimmed, cut and capped', () => {
    const many = Array.from({ length: 12 }, (_, i) => `k${i}`);
    expect(
      parseRecallQuery(JSON.stringify({ keywords: [' a ', '', 7, 'b'.repeat(80), ...many], from: '', to: 'Nov 22' })),
    ).toEqual({ keywords: ['a', 'b'.repeat(60), ...many.slice(0, 8)] });
  });

  it('drops a bound that is not a calendar date', () => {
    expect(parseRecallQuery('{"keywords": ["x"], "from": "2026-02-30", "to": "2026-13-01"}')).toEqual({
      keywords: ['x'],
    });
  });

  it('is null without a JSON object', () => {
    expect(parseRecallQuery('no idea')).toBeNull();
    expect(parseRecallQuery('{"keywords": "dentist"}')).toBeNull();
  });
});

describe('extractRecallQuery', () => {
  const options = {
    model: undefined,
    now: new Date('2026-11-23T10:00:00Z'),
    signal: new AbortController().signal,
    timeoutMs: 1000,
  };

  it('tries twice, then gives up', async () => {
    const provider = createScriptedProvider([{ text: 'nope' }, { error: new Error('down') }]);
    expect(await extractRecallQuery('what did I say?', { ...options, provider })).toBeNull();
    expect(provider.requests).toHaveLength(2);
  });

  it('a second attempt can succeed', async () => {
    const provider = createScriptedProvider([{ text: 'nope' }, { text: '{"keywords": ["milk"]}' }]);
    expect(await extractRecallQuery('milk?', { ...options, provider })).toEqual({ keywords: ['milk'] });
  });
});
