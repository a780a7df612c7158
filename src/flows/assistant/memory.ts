import type { MemoryScope, Message, MessageEmbedding } from '../../core/domain.ts';
import { cosine, type Embedder } from '../../llm/embeddings.ts';
import type { FlowWrites, StoreOperations } from '../../store/store.ts';
import type { RecallQuery } from './recall.ts';

/** Semantic recall's settings (`LLM_EMBEDDING_MODEL`, `ASSISTANT_RECALL_MIN_SIMILARITY`). */
export interface SemanticRecall {
  embedder: Embedder;
  /** Below this cosine similarity a message is not recalled by meaning. */
  minSimilarity: number;
  /** For the embedding call; past it, recall is text search alone. */
  timeoutMs: number;
}

/** Messages not embedded yet that one recall embeds (with its query, in one call), newest first. */
export const EMBED_BATCH = 100;
/** Embedded messages one recall compares at most (brute force), newest first. */
export const MAX_COMPARED = 5000;
/** Reciprocal rank fusion's constant: how much a top rank counts against a lower one. */
const RRF_K = 60;

export interface Recalled {
  messages: Message[];
  /** How they were found, for the turn's audit. */
  how: string;
}

const keyOf = (m: { conversationId: string; seq: number }) => `${m.conversationId}\u0000${m.seq}`;

/**
 * A person's memory for one turn (decision 006): full-text search over their conversations,
 * merged with semantic search when an embeddings model is configured. Messages the model has not
 * embedded yet are embedded as a recall needs them (with the query, in one call) and kept when
 * the turn commits; an embeddings endpoint that fails or is slow leaves recall to text search.
 */
export class PersonMemory {
  readonly #store: Pick<StoreOperations, 'searchMessages' | 'messagesWithoutEmbedding' | 'listEmbeddings'>;
  readonly #scope: MemoryScope;
  readonly #semantic: SemanticRecall | undefined;
  /** Embedded this turn, kept at commit. */
  readonly #fresh = new Map<string, MessageEmbedding & { message: Message }>();

  constructor(
    store: Pick<StoreOperations, 'searchMessages' | 'messagesWithoutEmbedding' | 'listEmbeddings'>,
    scope: MemoryScope,
    semantic: SemanticRecall | undefined,
  ) {
    this.#store = store;
    this.#scope = scope;
    this.#semantic = semantic;
  }

  /**
   * `text` is what the meaning is read from (the request, or the tool's keywords). Throws only for
   * the turn's own abort or a store failure.
   */
  async recall(query: RecallQuery, text: string, limit: number, signal: AbortSignal): Promise<Recalled> {
    const lexical = query.keywords.length > 0 ? await this.#store.searchMessages(this.#scope, { ...query, limit }) : [];
    if (!this.#semantic) return { messages: byTime(lexical), how: `${lexical.length} by text` };
    let semantic: Message[];
    try {
      semantic = await this.#bySense(this.#semantic, query, text, limit, signal);
    } catch (error) {
      signal.throwIfAborted();
      const reason = error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : (error as Error).message;
      return { messages: byTime(lexical), how: `${lexical.length} by text (semantic recall unavailable: ${reason})` };
    }
    return {
      messages: byTime(fuse([lexical, semantic], limit)),
      how: `${lexical.length} by text, ${semantic.length} by meaning`,
    };
  }

  /** Keeps the embeddings made this turn, in the turn's transaction. */
  async commit(tx: FlowWrites, now: Date): Promise<void> {
    if (this.#semantic && this.#fresh.size > 0)
      await tx.saveEmbeddings(this.#semantic.embedder.model, [...this.#fresh.values()], now);
  }

  async #bySense(
    semantic: SemanticRecall,
    query: RecallQuery,
    text: string,
    limit: number,
    turn: AbortSignal,
  ): Promise<Message[]> {
    const { embedder } = semantic;
    const missing = (await this.#store.messagesWithoutEmbedding(this.#scope, embedder.model, EMBED_BATCH)).filter(
      (message) => !this.#fresh.has(keyOf(message)),
    );
    const signal = AbortSignal.any([turn, AbortSignal.timeout(semantic.timeoutMs)]);
    const [wanted, ...vectors] = await embedder.embed([text, ...missing.map((message) => message.text)], signal);
    missing.forEach((message, index) =>
      this.#fresh.set(keyOf(message), {
        conversationId: message.conversationId,
        seq: message.seq,
        vector: vectors[index]!,
        message,
      }),
    );
    const stored = await this.#store.listEmbeddings(this.#scope, embedder.model, { ...query, limit: MAX_COMPARED });
    const candidates = new Map(stored.map((entry) => [keyOf(entry.message), entry]));
    for (const [key, entry] of this.#fresh)
      if (within(entry.message, query)) candidates.set(key, { message: entry.message, vector: entry.vector });
    return [...candidates.values()]
      .map((entry) => ({ message: entry.message, score: cosine(wanted!, entry.vector) }))
      .filter((scored) => scored.score >= semantic.minSimilarity)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map((scored) => scored.message);
  }
}

const within = (message: Message, query: RecallQuery) =>
  (!query.from || message.createdAt >= query.from) && (!query.to || message.createdAt <= query.to);

/** Reciprocal rank fusion of ranked lists: found high in either, or in both, comes first. */
export function fuse(lists: ReadonlyArray<readonly Message[]>, limit: number): Message[] {
  const scores = new Map<string, { message: Message; score: number }>();
  for (const list of lists)
    list.forEach((message, rank) => {
      const entry = scores.get(keyOf(message)) ?? { message, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      scores.set(keyOf(message), entry);
    });
  return [...scores.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((entry) => entry.message);
}

/** Oldest first, as the model reads them. */
const byTime = (messages: Message[]) =>
  [...messages].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.seq - b.seq);
