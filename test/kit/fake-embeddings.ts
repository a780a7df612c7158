import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackFake, readBody, sendJson } from './loopback-fake.ts';

/**
 * An OpenAI-compatible `POST /v1/embeddings` on a loopback port whose vectors carry meaning the
 * tests can reason about: words of one concept (car, vehicle, parked, garage) share a dimension,
 * every other word is hashed into one of 64 others. So a paraphrase is close, an unrelated text
 * far. `mode` makes it fail (`error`: HTTP 500) or never answer (`hang`).
 */
export class FakeEmbeddings extends LoopbackFake<{ model: string; input: string[] }> {
  mode: 'ok' | 'error' | 'hang' = 'ok';

  constructor() {
    super('embeddings', (response, error) => sendJson(response, 500, { error: { message: String(error) } }));
  }

  /** Every text the fake was asked to embed. */
  get texts(): string[] {
    return this.sent.flatMap((request) => request.input);
  }

  protected async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = JSON.parse(await readBody(request)) as { model: string; input: string[] | string };
    if (request.method !== 'POST' || request.url !== '/v1/embeddings') return sendJson(response, 404, {});
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    this.accept({ model: body.model, input });
    if (this.mode === 'hang') return; // the connection stays open until the fake closes
    if (this.mode === 'error') return sendJson(response, 500, { error: { message: 'embeddings are down' } });
    sendJson(response, 200, {
      object: 'list',
      model: body.model,
      // Out of order on purpose: clients must place each vector by its index.
      data: input.map((text, index) => ({ object: 'embedding', index, embedding: embed(text) })).reverse(),
    });
  }
}

const CONCEPTS: Record<string, number> = {
  car: 0,
  cars: 0,
  vehicle: 0,
  parked: 0,
  park: 0,
  parking: 0,
  garage: 0,
  dentist: 1,
  teeth: 1,
  dental: 1,
  milk: 2,
  groceries: 2,
};
const HASHED = 64;

function embed(text: string): number[] {
  const vector = Array.from({ length: 3 + HASHED }, () => 0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const concept = CONCEPTS[word];
    if (concept !== undefined) vector[concept]! += 3;
    else vector[3 + ([...word].reduce((hash, c) => (hash * 31 + c.charCodeAt(0)) >>> 0, 7) % HASHED)]! += 1;
  }
  return vector;
}
