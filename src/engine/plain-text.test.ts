import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { JsonGuard, plainReply, startsLikeJson } from './plain-text.ts';

describe('plainReply', () => {
  it('keeps plain text as it is', () => {
    expect(plainReply('Great job today!', 'fallback')).toBe('Great job today!');
    expect(plainReply('Braces {inside} are fine', 'fallback')).toBe('Braces {inside} are fine');
  });

  it('pulls a reply field out of JSON, fenced or not', () => {
    expect(plainReply('{"reply": "Well done!", "state": "FEEDBACK"}', 'fallback')).toBe('Well done!');
    expect(plainReply('```json\n{"message": "See you tomorrow."}\n```', 'fallback')).toBe('See you tomorrow.');
  });

  it('falls back when JSON carries no usable text', () => {
    expect(plainReply('{"state": "FEEDBACK"}', 'fallback')).toBe('fallback');
    expect(plainReply('[1, 2, 3]', 'fallback')).toBe('fallback');
    expect(plainReply('{"reply": "{\\"nested\\": 1}"}', 'fallback')).toBe('fallback');
    expect(plainReply('{"reply": ', 'fallback')).toBe('fallback');
  });
});

describe('JsonGuard', () => {
  const run = (deltas: string[]) => {
    const guard = new JsonGuard();
    return deltas.map((delta) => guard.push(delta)).join('');
  };

  it('releases narration in order once the start is clear', () => {
    expect(run([' ', '`', 'Hi', ' there'])).toBe(' `Hi there');
    expect(run(['Hel', 'lo'])).toBe('Hello');
  });

  it('suppresses a stream that starts like JSON or a fence, however it is split', () => {
    expect(run(['', '  ', '{"re', 'ply": "x"}'])).toBe('');
    expect(run(['`', '`', '`json\n{}'])).toBe('');
  });

  it('never releases anything from a JSON-looking stream, and never loses text from a plain one', () => {
    fc.assert(
      fc.property(fc.string(), fc.array(fc.nat({ max: 5 }), { maxLength: 10 }), (text, cuts) => {
        const deltas: string[] = [];
        let rest = text;
        for (const cut of cuts) {
          deltas.push(rest.slice(0, cut));
          rest = rest.slice(cut);
        }
        deltas.push(rest);
        const out = run(deltas);
        const verdict = startsLikeJson(text);
        if (verdict === true) expect(out).toBe('');
        if (verdict === false) expect(out).toBe(text);
      }),
    );
  });
});
