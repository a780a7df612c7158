import { describe, expect, it } from 'vitest';
import { cosine, createOpenAiEmbedder } from './embeddings.ts';

const answering = (body: unknown, status = 200) => {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return new Response(JSON.stringify(body), { status });
  }) as unknown as typeof globalThis.fetch;
  return { calls, fetch };
};

describe('OpenAI-compatible embedder', () => {
  it('posts the texts to /embeddings with the key, and places each vector by its index', async () => {
    const { calls, fetch } = answering({
      data: [
        { index: 1, embedding: [0, 1] },
        { index: 0, embedding: [1, 0] },
      ],
    });
    const embedder = createOpenAiEmbedder({ baseUrl: 'http://127.0.0.1:1/v1/', apiKey: 'k', model: 'm', fetch });
    const vectors = await embedder.embed(['a', 'b'], AbortSignal.timeout(60_000));
    expect(vectors).toEqual([Float32Array.from([1, 0]), Float32Array.from([0, 1])]);
    expect(calls[0]!.url).toBe('http://127.0.0.1:1/v1/embeddings');
    expect(JSON.parse(String(calls[0]!.init.body))).toEqual({ model: 'm', input: ['a', 'b'] });
    expect((calls[0]!.init.headers as Record<string, string>).authorization).toBe('Bearer k');
  });

  it('refuses an error status, a body that is not embeddings, or a vector missing', async () => {
    const signal = AbortSignal.timeout(60_000);
    const embed = (body: unknown, status?: number) =>
      createOpenAiEmbedder({ baseUrl: 'http://x/v1', model: 'm', fetch: answering(body, status).fetch }).embed(
        ['a', 'b'],
        signal,
      );
    await expect(embed({}, 503)).rejects.toThrow('the embeddings endpoint answered 503');
    await expect(embed({ data: 'nope' })).rejects.toThrow('not embeddings');
    await expect(embed({ data: [{ index: 1, embedding: [1] }] })).rejects.toThrow('answered 1 vectors for 2 texts');
  });

  it('measures cosine similarity, 0 for vectors of another length or none', () => {
    expect(cosine(Float32Array.from([1, 0]), Float32Array.from([2, 0]))).toBeCloseTo(1);
    expect(cosine(Float32Array.from([1, 0]), Float32Array.from([0, 3]))).toBe(0);
    expect(cosine(Float32Array.from([1, 0]), Float32Array.from([1, 0, 0]))).toBe(0);
    expect(cosine(Float32Array.from([0, 0]), Float32Array.from([1, 0]))).toBe(0);
  });
});
