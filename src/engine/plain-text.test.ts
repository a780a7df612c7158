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

  it('keeps a fenced code sample that is not JSON', () => {
    const sample = '```bash\nnpm install zod\n```\nThen import it.';
    expect(plainReply(sample, 'fallback')).toBe(sample);
    expect(plainReply('```\nls -la\n```', 'fallback')).toBe('```\nls -la\n```');
    expect(plainReply('```\n{"state": 1}\n```', 'fallback')).toBe('fallback');
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
    expect(run(['``', '`\n', '  [1]'])).toBe('');
  });

  it('releases a fenced code sample once its language (or body) shows it is not JSON', () => {
    expect(run(['``', '`ba', 'sh\nls\n```'])).toBe('```bash\nls\n```');
    expect(run(['```', '\n', 'ls'])).toBe('```\nls');
  });

  it('never releases anything from a JSON-looking stream, and never loses text from a plain one', () => {
    fc.assert(
      // Texts made of the characters that matter (fences, tags, brackets), as well as any text.
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: fc.constantFrom('`', 'j', 's', 'o', 'n', 'b', '\n', ' ', '{', '[', 'x') }),
        ),
        fc.array(fc.nat({ max: 5 }), { maxLength: 10 }),
        (text, cuts) => {
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
        },
      ),
    );
  });
});
