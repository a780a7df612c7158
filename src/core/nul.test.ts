import { describe, expect, it } from 'vitest';
import { unstorablePath } from './nul.ts';

describe('unstorablePath', () => {
  it('finds U+0000 or half of a surrogate pair, in a value or a key, and names its path', () => {
    expect(unstorablePath({ a: [{ b: 'x\u0000' }] })).toEqual({ path: 'a.0.b', what: 'the NUL character (U+0000)' });
    expect(unstorablePath(JSON.parse('{"name":"A\\ud800"}'))).toEqual({
      path: 'name',
      what: 'an unpaired surrogate (U+D800 to U+DFFF)',
    });
    expect(unstorablePath(JSON.parse('{"\\udc00":1}'))?.path).toBe('\udc00');
    expect(unstorablePath('\u0000')).toEqual({ path: '', what: 'the NUL character (U+0000)' });
  });

  it('passes a whole pair written as escapes, and anything else', () => {
    expect(unstorablePath(JSON.parse('{"name":"A\\ud83d\\ude00","n":[1,null,true]}'))).toBeUndefined();
    expect(unstorablePath(undefined)).toBeUndefined();
  });
});
