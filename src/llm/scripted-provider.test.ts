import { describe, expect, it } from 'vitest';
import { createScriptedProvider, splitText } from './scripted-provider.ts';

describe('the scripted provider', () => {
  it('streams a text in the pieces asked for, whole characters each, that join into the text', async () => {
    const text = 'Walk 🚶 after 👍🏽 breakfast, then rest.';
    for (const count of [1, 3, 7, 40, 100]) {
      const pieces = splitText(text, count);
      expect(pieces.join('')).toBe(text);
      expect(pieces.length).toBe(Math.min(count, Array.from(text).length));
      for (const piece of pieces) expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    }
    expect(splitText('plain text', 3)).toEqual(['plai', 'n te', 'xt']);
    for (const odd of [0, -2, Number.NaN, Number.POSITIVE_INFINITY]) expect(splitText('plain', odd)).toEqual(['plain']);
    expect(splitText('plain', 2.7)).toEqual(['pla', 'in']);
    expect(splitText('', 3)).toEqual([]);

    const deltas: string[] = [];
    const provider = createScriptedProvider([{ text }], { deltas: 5 });
    const response = await provider.complete({ messages: [] }, { onTextDelta: (delta) => deltas.push(delta) });
    expect(deltas).toEqual(splitText(text, 5));
    expect(response.text).toBe(text);
  });
});
