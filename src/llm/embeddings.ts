import { z } from 'zod';

/** Turns texts into vectors (semantic recall, decision 006). One call embeds them all, in order. */
export interface Embedder {
  /** The model's name: vectors are kept per model, so changing it starts afresh. */
  readonly model: string;
  embed(texts: readonly string[], signal: AbortSignal): Promise<Float32Array[]>;
}

export interface OpenAiEmbedderOptions {
  /** Up to the version segment, as `LLM_BASE_URL`: `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  fetch?: typeof fetch;
}

const embeddingsResponse = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()).min(1) })),
});

/** Longest text sent for one embedding (models take a few thousand tokens; recall needs the gist). */
const MAX_TEXT = 8000;

/**
 * `POST {baseUrl}/embeddings` of any OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp).
 * No retries: recall falls back to text search on any failure, and the caller sets the time limit.
 */
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
  const send = options.fetch ?? fetch;
  return {
    model: options.model,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const response = await send(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: options.model, input: texts.map((text) => text.slice(0, MAX_TEXT) || ' ') }),
        signal,
      });
      if (!response.ok) throw new Error(`the embeddings endpoint answered ${response.status}`);
      const parsed = embeddingsResponse.safeParse(await response.json());
      if (!parsed.success) throw new Error('the embeddings endpoint answered something that is not embeddings');
      const vectors: Float32Array[] = [];
      for (const item of parsed.data.data) vectors[item.index] = Float32Array.from(item.embedding);
      if (vectors.length !== texts.length || !texts.every((_, index) => vectors[index] !== undefined))
        throw new Error(
          `the embeddings endpoint answered ${parsed.data.data.length} vectors for ${texts.length} texts`,
        );
      return vectors;
    },
  };
}

/** Cosine similarity; 0 for vectors of different lengths (another model's) or of no length. */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}
