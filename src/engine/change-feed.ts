/**
 * "Something changed in this conversation": published after every piece of work the engine runs
 * for a conversation (a turn, a timer, an operator action). Listeners re-read what they show;
 * the feed carries no data, so a missed or coalesced notification loses nothing.
 */
/** `turn`: a turn's commit, whose messages the turn already put on the event stream; `other`: anything else. */
export type ChangeOrigin = 'turn' | 'other';
export type ChangeListener = (conversationId: string, origin: ChangeOrigin) => void;

export class ChangeFeed {
  readonly #listeners = new Set<ChangeListener>();

  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(conversationId: string, origin: ChangeOrigin = 'other'): void {
    for (const listener of this.#listeners) {
      try {
        listener(conversationId, origin);
      } catch {
        // A broken listener must not break the engine or the other listeners.
      }
    }
  }

  get size(): number {
    return this.#listeners.size;
  }
}
