import { context, trace } from '@opentelemetry/api';

/**
 * `trace_id` and `span_id` of the active span, merged into every log line (a pino mixin), so a log
 * line leads to its trace. Empty outside a span, and always with tracing off (no span is ever active).
 */
export function activeTraceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpanContext(context.active());
  return span ? { trace_id: span.traceId, span_id: span.spanId } : {};
}
