/**
 * "Something changed in this conversation": published after every piece of work the engine runs
 * for a conversation (a turn, a timer, an operator action). Listeners re-read what they show;
 * the feed carries no data, so a missed or coalesced notification loses nothing.
 */
export type ChangeListener = (conversationId: string) => void;

export class ChangeFeed {
  readonly #listeners = new Set<ChangeListener>();

  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(conversationId: string): void {
    for (const listener of this.#listeners) {
      try {
        listener(conversationId);
      } catch {
        // A broken listener must not break the engine or the other listeners.
      }
    }
  }

  get size(): number {
    return this.#listeners.size;
  }
}
