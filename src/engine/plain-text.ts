/**
 * Narration is plain text. Models sometimes answer with JSON (`{"reply": "..."}`) or a fenced
 * block; that must never reach a participant. Detect it from the first characters.
 */

const JSON_START = /^(?:[{[]|```)/;
const REPLY_FIELDS = ['reply', 'text', 'message', 'response', 'content', 'answer'];

/** Null while the start is still ambiguous (blank, or a lone backtick or two). */
export function startsLikeJson(text: string): boolean | null {
  const start = text.trimStart();
  if (start.length === 0 || (start.length < 3 && /^`+$/.test(start))) return null;
  return JSON_START.test(start);
}

/** The reply to store and send: the text itself, a reply field pulled out of JSON, or the fallback. */
export function plainReply(text: string, fallback: string): string {
  if (startsLikeJson(text) !== true) return text;
  const body = text.trim().replace(/^```[a-z]*\s*/i, '').replace(/```$/, '').trim();
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      for (const field of REPLY_FIELDS) {
        const value = (parsed as Record<string, unknown>)[field];
        if (typeof value === 'string' && value.trim() && startsLikeJson(value) === false) return value.trim();
      }
    }
  } catch {
    // Not JSON after all (a fenced code sample, a list in brackets): fall through.
  }
  return startsLikeJson(body) === false && !text.trim().startsWith('```') ? text : fallback;
}

/**
 * Holds back the first characters of one model stream until it is clear whether they are
 * narration (then everything is released, in order) or JSON (then nothing is).
 */
export class JsonGuard {
  #held = '';
  #mode: 'deciding' | 'text' | 'json' = 'deciding';

  /** The text to pass on now ('' when held back or suppressed). */
  push(delta: string): string {
    if (this.#mode === 'text') return delta;
    if (this.#mode === 'json') return '';
    this.#held += delta;
    const json = startsLikeJson(this.#held);
    if (json === null) return '';
    this.#mode = json ? 'json' : 'text';
    const released = json ? '' : this.#held;
    this.#held = '';
    return released;
  }

  get suppressed(): boolean {
    return this.#mode === 'json';
  }
}
