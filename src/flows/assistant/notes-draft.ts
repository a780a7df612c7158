import type { IdGenerator } from '../../core/clock.ts';
import type { MemoryScope, Note } from '../../core/domain.ts';
import type { FlowWrites } from '../../store/store.ts';

/**
 * The person's notes (the conversation's, when nobody is known) as the turn changes them: tools
 * read and change this copy, and the changes are written in the turn's transaction, with the tool
 * calls that made them. A turn that never commits (a crash, a shutdown: it runs again) leaves no
 * trace; a turn whose model failed or was barged in on after `add_note` ran keeps the note, as its
 * audit says it was saved.
 */
export class NotesDraft {
  readonly #notes: Note[];
  readonly #added: Note[] = [];
  readonly #deleted: string[] = [];
  readonly #context: { scope: MemoryScope; ids: IdGenerator; now: () => Date };

  constructor(stored: readonly Note[], context: { scope: MemoryScope; ids: IdGenerator; now: () => Date }) {
    this.#notes = [...stored];
    this.#context = context;
  }

  list(): readonly Note[] {
    return this.#notes;
  }

  add(text: string): Note {
    const note = {
      id: this.#context.ids.next('note'),
      conversationId: this.#context.scope.conversationId,
      person: this.#context.scope.person,
      text,
      createdAt: this.#context.now(),
    };
    this.#notes.push(note);
    this.#added.push(note);
    return note;
  }

  delete(id: string): boolean {
    const index = this.#notes.findIndex((note) => note.id === id);
    if (index < 0) return false;
    this.#notes.splice(index, 1);
    const added = this.#added.findIndex((note) => note.id === id);
    if (added >= 0) this.#added.splice(added, 1);
    else this.#deleted.push(id);
    return true;
  }

  async commit(tx: FlowWrites): Promise<void> {
    for (const note of this.#added) await tx.addNote(note);
    for (const id of this.#deleted) await tx.deleteNote(this.#context.scope, id);
  }
}
