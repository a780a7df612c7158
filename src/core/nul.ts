/**
 * U+0000, the one character PostgreSQL's text cannot hold (`invalid byte sequence for encoding
 * "UTF8": 0x00`). An API client sending it is told so (400, the field named); text the server
 * does not choose to refuse (a provider's webhook, a model's reply) has it replaced by U+FFFD, the
 * replacement character, so that the message is kept on either store.
 */
export const NUL = '\u0000';

export function replaceNul(text: string): string {
  return text.includes(NUL) ? text.replaceAll(NUL, '\uFFFD') : text;
}

interface Step {
  value: unknown;
  key: string | number | undefined;
  parent: Step | undefined;
}

/**
 * What of a string no store keeps as sent: U+0000, or half of a surrogate pair (a JSON `\uD800`
 * escape alone), which UTF-8 cannot encode: both stores would keep U+FFFD in its place.
 */
function unstorable(text: string): string | undefined {
  if (text.includes(NUL)) return 'the NUL character (U+0000)';
  if (!text.isWellFormed()) return 'an unpaired surrogate (U+D800 to U+DFFF)';
  return undefined;
}

/**
 * The path (`a.b.0`) of a string or object key in a parsed value that a store cannot keep as sent
 * (`unstorable`), and what it holds: walked without recursion (a body may nest thousands deep)
 * and without a path per element (only the one found is spelled out).
 */
export function unstorablePath(root: unknown): { path: string; what: string } | undefined {
  const stack: Step[] = [{ value: root, key: undefined, parent: undefined }];
  for (let step = stack.pop(); step; step = stack.pop()) {
    const { value } = step;
    if (typeof value === 'string') {
      const what = unstorable(value);
      if (what) return { path: pathOf(step), what };
      continue;
    }
    if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) continue;
    for (const [key, item] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
      const child = { value: item, key, parent: step };
      const what = typeof key === 'string' ? unstorable(key) : undefined;
      if (what) return { path: pathOf(child), what };
      stack.push(child);
    }
  }
  return undefined;
}

function pathOf(step: Step): string {
  const keys: Array<string | number> = [];
  for (let at: Step | undefined = step; at?.key !== undefined; at = at.parent) keys.push(at.key);
  return keys.reverse().join('.');
}
