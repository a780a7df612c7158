import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from '../config/config.ts';
import { isAppError } from '../core/errors.ts';
import type { LlmFinishReason, LlmProvider } from '../llm/llm-provider.ts';

/**
 * OpenTelemetry traces (decision 021): the official SDK, spans exported as OTLP/HTTP JSON. Off
 * unless an OTLP endpoint is configured; then every server has a tracer provider of its own (tests
 * run several servers in one process), never the global one. Only the context manager is global:
 * it is what carries the active span across `await`, and one serves every provider.
 */
export class Tracing {
  readonly tracer: Tracer;
  readonly propagator = new W3CTraceContextPropagator();
  readonly #provider: BasicTracerProvider;

  constructor(config: TracingConfig, version: string) {
    installContextManager();
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': version }),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: config.url, headers: { ...config.headers } })),
      ],
    });
    this.tracer = this.#provider.getTracer('promptpipe', version);
  }

  /** Sends every span still buffered. */
  flush(): Promise<void> {
    return this.#provider.forceFlush();
  }

  /** Sends what is buffered and stops; spans started after this are dropped. */
  shutdown(): Promise<void> {
    return this.#provider.shutdown();
  }

  /** The active span as a W3C `traceparent` value, or undefined when none is active. */
  readonly traceParent = (): string | undefined => {
    const carrier: Record<string, string> = {};
    this.propagator.inject(context.active(), carrier, {
      set: (target, key, value) => {
        target[key] = value;
      },
    });
    return carrier.traceparent;
  };

  /** The context a request's `traceparent` header names (the caller's trace), else the active one. */
  extract(headers: Record<string, string | string[] | undefined>): Context {
    return this.propagator.extract(ROOT_CONTEXT, headers, {
      keys: (carrier) => Object.keys(carrier),
      get: (carrier, key) => carrier[key],
    });
  }
}

let contextManagerInstalled = false;

/** AsyncLocalStorage carries the active span; installed once per process, shared by every server. */
function installContextManager(): void {
  if (contextManagerInstalled) return;
  // False when another library installed one first: theirs carries our spans as well.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  contextManagerInstalled = true;
}

/** Ends `span` with the outcome of `work`, whose errors it records (as `error.type`) and rethrows. */
export async function inSpan<T>(span: Span, work: () => Promise<T>, done?: (value: T) => void): Promise<T> {
  try {
    const value = await context.with(trace.setSpan(context.active(), span), work);
    done?.(value);
    return value;
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Marks a span failed: `error.type` is the stable error code (or the error's class), the status ERROR. */
export function failed(span: Span, error: unknown): void {
  const type = isAppError(error) ? error.code : error instanceof Error ? error.name : 'error';
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** The GenAI semantic conventions' `gen_ai.provider.name` for our provider names. */
function genAiProvider(name: string): string {
  return name === 'openai-compatible' ? 'openai' : name;
}

/** Our finish reasons in the GenAI conventions' words (`gen_ai.response.finish_reasons`). */
const FINISH_REASONS: Record<LlmFinishReason, string> = {
  stop: 'stop',
  'tool-calls': 'tool_calls',
  length: 'length',
  'content-filter': 'content_filter',
  error: 'error',
  other: 'other',
};

/**
 * A span per model call, as the OpenTelemetry GenAI semantic conventions name them: `chat {model}`,
 * kind CLIENT, with the request and response model, token usage and finish reason. Prompts and
 * replies are never recorded (personal data).
 */
export function traceModelCalls(tracing: Tracing, provider: LlmProvider): LlmProvider {
  return {
    name: provider.name,
    model: provider.model,
    complete: (request, options) => {
      const model = request.model ?? provider.model;
      const attributes: Attributes = {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': genAiProvider(provider.name),
        'gen_ai.system': genAiProvider(provider.name),
        'gen_ai.request.model': model,
      };
      if (request.temperature !== undefined) attributes['gen_ai.request.temperature'] = request.temperature;
      if (request.maxOutputTokens !== undefined) attributes['gen_ai.request.max_tokens'] = request.maxOutputTokens;
      if (request.tools?.length) attributes['promptpipe.tools_offered'] = request.tools.length;
      const span = tracing.tracer.startSpan(`chat ${model}`, { kind: SpanKind.CLIENT, attributes });
      return inSpan(
        span,
        () => provider.complete(request, options),
        (response) => {
          span.setAttributes({
            'gen_ai.response.model': response.model,
            'gen_ai.response.finish_reasons': [FINISH_REASONS[response.finishReason]],
            ...(response.usage
              ? {
                  'gen_ai.usage.input_tokens': response.usage.inputTokens,
                  'gen_ai.usage.output_tokens': response.usage.outputTokens,
                }
              : {}),
            'promptpipe.tool_calls': response.toolCalls.length,
          });
        },
      );
    },
  };
}
