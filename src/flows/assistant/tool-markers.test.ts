import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMarkerFilter, stripToolMarkers } from './tool-markers.ts';

const streamed = (pieces: string[]) => {
  const out: string[] = [];
  const filter = createMarkerFilter((text) => out.push(text));
  for (const piece of pieces) filter.push(piece);
  filter.flush();
  return out.join('');
};

describe('tool-protocol markers', () => {
  it('drops marker lines and whole tool blocks, keeps prose', () => {
    expect(stripToolMarkers('TOOL_CALL: list_notes {}\nYou have two notes.\n[TOOL_CALLS] x')).toBe(
      'You have two notes.',
    );
    expect(stripToolMarkers('Sure.\n<tool_call>\n{"name": "calculator"}\n</tool_call>\nDone.')).toBe('Sure.\nDone.');
    expect(stripToolMarkers('Tool: a chisel.\nThe toolbox: a hammer.\nTOOLS are great')).toBe(
      'Tool: a chisel.\nThe toolbox: a hammer.\nTOOLS are great',
    );
  });

  it('never lets a marker line through while streaming, and holds back only a line that could be one', () => {
    const text =
      'Hello!\nTOOL_CALL: calculator {"expression": "1+1"}\n<tool_call>\n{"a": 1}\n</tool_call>\nTwo.\nTO be or not';
    expect(streamed(Array.from(text))).toBe('Hello!\nTwo.\nTO be or not');
    const out: string[] = [];
    const filter = createMarkerFilter((piece) => out.push(piece));
    filter.push('Hi there, ');
    expect(out).toEqual(['Hi there, ']);
    filter.push('\nTOO');
    expect(out).toEqual(['Hi there, ', '\n']);
  });

  it('streams the same text as the final reply, however it is split', () => {
    const lines = fc.constantFrom(
      'Hello.',
      'TOOL: x',
      'TOOL',
      '<tool_call>',
      '{"a":1}',
      '</tool_call>',
      '  indented',
      '',
      '[TOOL_CALLS] y',
      'Tools: none',
    );
    fc.assert(
      fc.property(
        fc.array(lines, { maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 30 }),
        (parts, cuts) => {
          const text = parts.join('\n');
          const pieces: string[] = [];
          let at = 0;
          for (const cut of cuts) pieces.push(text.slice(at, (at += cut)));
          pieces.push(text.slice(at));
          expect(streamed(pieces).trim()).toBe(stripToolMarkers(text));
        },
      ),
    );
  });
});
