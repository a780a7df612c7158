import { describeError, isAppError, isModelUnavailable } from '../core/errors.ts';
import type { ModelObserver } from '../observability/metrics.ts';
import type { LlmProvider } from './llm-provider.ts';

/** What `/health` says of the model. */
export interface ModelStatus {
  /** `failing` after the last call failed, `ok` after it succeeded, `unknown` before any call. */
  state: 'ok' | 'failing' | 'unknown';
  lastSuccessAt: string | null;
  lastErrorAt: string | null;
  lastError: string | null;
  /** Whether the last failure passes (the turn waits and runs again) or needs someone (a bad key). */
  lastErrorTransient: boolean | null;
  consecutiveFailures: number;
}

/**
 * Watches every model call a provider makes (wall time: operators read it), so `/health` and the
 * console can say the model is failing while it is, and since when.
 */
export class ModelHealth {
  readonly #observer: ModelObserver | undefined;
  #lastSuccessAt: Date | null = null;
  #lastErrorAt: Date | null = null;
  #lastError: string | null = null;
  #lastErrorTransient: boolean | null = null;
  #consecutiveFailures = 0;

  constructor(observer?: ModelObserver) {
    this.#observer = observer;
  }

  observe(provider: LlmProvider): LlmProvider {
    return {
      name: provider.name,
      model: provider.model,
      complete: async (request, options) => {
        const started = performance.now();
        const seconds = () => (performance.now() - started) / 1000;
        try {
          const response = await provider.complete(request, options);
          this.#lastSuccessAt = new Date();
          this.#consecutiveFailures = 0;
          this.#observer?.modelCalled('ok', seconds());
          return response;
        } catch (error) {
          // A call the turn itself aborted (shutdown, barge-in) says nothing about the model.
          if (!options?.signal?.aborted) {
            this.#failed(error);
            this.#observer?.modelCalled(isAppError(error) ? error.code : 'error', seconds());
          }
          throw error;
        }
      },
    };
  }

  get status(): ModelStatus {
    return {
      state: this.#consecutiveFailures > 0 ? 'failing' : this.#lastSuccessAt ? 'ok' : 'unknown',
      lastSuccessAt: this.#lastSuccessAt?.toISOString() ?? null,
      lastErrorAt: this.#lastErrorAt?.toISOString() ?? null,
      lastError: this.#lastError,
      lastErrorTransient: this.#lastErrorTransient,
      consecutiveFailures: this.#consecutiveFailures,
    };
  }

  #failed(error: unknown): void {
    this.#lastErrorAt = new Date();
    this.#lastError = describeError(error);
    this.#lastErrorTransient = isModelUnavailable(error);
    this.#consecutiveFailures += 1;
  }
}
