import { Worker } from 'node:worker_threads';
import {
  readWhatsAppWebhookInParts,
  whatsappEnvelope,
  type WhatsAppWebhook,
} from '../channels/whatsapp/whatsapp-webhook.ts';
import { AppError, type ErrorCode, isAppError } from '../core/errors.ts';
import { parseRequest } from './http-errors.ts';

/**
 * Bodies up to this size are parsed on the event loop (about a millisecond). A larger one (Meta
 * batches up to 3 MB, thousands of messages) would hold the loop for tens of milliseconds in
 * `JSON.parse` alone: it is parsed and read on a worker thread, which hands over one part at a time.
 */
export const OFF_THREAD_BYTES = 256 * 1024;

/** Parses a webhook body and reads it in parts of at most `size` messages and statuses. */
export function* readWhatsAppBodyNow(raw: Uint8Array, size: number): Generator<WhatsAppWebhook, void, void> {
  const envelope = parseRequest(whatsappEnvelope, parseJson(raw), 'body');
  yield* readWhatsAppWebhookInParts(envelope, size);
}

/**
 * The parts of a webhook body, read on a worker thread when the body is large. Each part is
 * asked for when the one before has been taken, so the event loop only ever copies in one part.
 */
export async function* readWhatsAppBody(raw: Uint8Array, size: number): AsyncGenerator<WhatsAppWebhook, void, void> {
  if (raw.byteLength <= OFF_THREAD_BYTES) {
    yield* readWhatsAppBodyNow(raw, size);
    return;
  }
  yield* partsWorker().read(raw, size);
}

function parseJson(raw: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8'));
  } catch (error) {
    throw new AppError('invalid_json', `body: is not valid JSON (${(error as Error).message})`, { field: 'body' });
  }
}

/** Main thread → worker. */
export type PartsRequest =
  | { id: number; type: 'open'; body: Uint8Array; size: number }
  | { id: number; type: 'next' }
  | { id: number; type: 'close' };

/** Worker → main thread: one answer per `open` or `next`. */
export type PartsAnswer =
  | { id: number; type: 'part'; part: WhatsAppWebhook }
  | { id: number; type: 'end' }
  | { id: number; type: 'error'; code: ErrorCode | null; message: string; field?: string };

export function errorAnswer(id: number, error: unknown): PartsAnswer {
  if (isAppError(error)) return { id, type: 'error', code: error.code, message: error.message, field: error.field };
  return { id, type: 'error', code: null, message: error instanceof Error ? error.message : String(error) };
}

let shared: PartsWorker | null = null;

/** One worker per process, started on the first large body; it does not keep the process alive. */
function partsWorker(): PartsWorker {
  shared ??= new PartsWorker(() => (shared = null));
  return shared;
}

class PartsWorker {
  readonly #worker = new Worker(new URL('./whatsapp-body-worker.ts', import.meta.url));
  readonly #waiting = new Map<number, (answer: PartsAnswer) => void>();
  #nextId = 1;

  constructor(onExit: () => void) {
    this.#worker.unref();
    this.#worker.on('message', (answer: PartsAnswer) => this.#waiting.get(answer.id)?.(answer));
    const fail = (error: Error) => {
      onExit();
      for (const [id, answer] of this.#waiting) answer(errorAnswer(id, error));
      this.#waiting.clear();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => fail(new Error(`the webhook reader thread exited (code ${code})`)));
  }

  async *read(body: Uint8Array, size: number): AsyncGenerator<WhatsAppWebhook, void, void> {
    const id = this.#nextId++;
    let open = true;
    try {
      for (
        let answer = await this.#ask({ id, type: 'open', body, size });
        ;
        answer = await this.#ask({ id, type: 'next' })
      ) {
        if (answer.type === 'error') {
          open = false;
          throw answer.code
            ? new AppError(answer.code, answer.message, { field: answer.field })
            : new Error(answer.message);
        }
        if (answer.type === 'end') {
          open = false;
          return;
        }
        yield answer.part;
      }
    } finally {
      // Abandoned half-way (a part failed to store): the worker drops what it holds.
      if (open) this.#worker.postMessage({ id, type: 'close' } satisfies PartsRequest);
    }
  }

  #ask(request: PartsRequest): Promise<PartsAnswer> {
    return new Promise((resolve) => {
      this.#waiting.set(request.id, (answer) => {
        this.#waiting.delete(request.id);
        resolve(answer);
      });
      this.#worker.postMessage(request);
    });
  }
}
