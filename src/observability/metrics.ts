import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the engine reports as turns, tool calls and deliveries happen (no metrics library in it). */
export interface EngineObserver {
  turnFinished(flow: string, status: string, seconds: number): void;
  toolCalled(tool: string, status: string): void;
  delivered(channel: string, outcome: 'sent' | 'retry' | 'failed'): void;
}

/** What a model call reports. */
export interface ModelObserver {
  modelCalled(outcome: string, seconds: number): void;
}

/** Live values read at each scrape. */
export interface MetricsSources {
  turnBacklog(): number;
  deliveriesInFlight(): number;
  streamClients(): number;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The server's Prometheus metrics (prom-client, the de facto Node client: exposition format, default
 * process metrics, histograms), on a registry of its own so several servers in one process (tests)
 * never share counters.
 */
export class Metrics implements EngineObserver, ModelObserver {
  readonly registry = new Registry();
  readonly #turns = new Counter({
    name: 'promptpipe_turns_total',
    help: 'Turns by flow and status',
    labelNames: ['flow', 'status'],
    registers: [this.registry],
  });
  readonly #turnSeconds = new Histogram({
    name: 'promptpipe_turn_duration_seconds',
    help: 'Turn duration, model and tools included',
    labelNames: ['flow'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly #modelCalls = new Counter({
    name: 'promptpipe_model_calls_total',
    help: 'Model calls by outcome (ok, or the error code: llm_unavailable, llm_rejected, ...)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  readonly #modelSeconds = new Histogram({
    name: 'promptpipe_model_call_duration_seconds',
    help: 'Model call duration, retries included',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly #toolCalls = new Counter({
    name: 'promptpipe_tool_calls_total',
    help: 'Tool calls by tool and status',
    labelNames: ['tool', 'status'],
    registers: [this.registry],
  });
  readonly #deliveries = new Counter({
    name: 'promptpipe_deliveries_total',
    help: 'Delivery attempts by channel and outcome (sent, retry, failed)',
    labelNames: ['channel', 'outcome'],
    registers: [this.registry],
  });
  readonly #requests = new Counter({
    name: 'promptpipe_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  readonly #requestSeconds = new Histogram({
    name: 'promptpipe_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  constructor(sources: MetricsSources) {
    collectDefaultMetrics({ register: this.registry, prefix: 'promptpipe_' });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    gauge('promptpipe_turn_backlog', 'Turns queued or running in this process', sources.turnBacklog);
    gauge('promptpipe_deliveries_in_flight', 'Deliveries being sent by this process', sources.deliveriesInFlight);
    gauge(
      'promptpipe_event_stream_clients',
      'Open event-stream subscriptions (WebSocket, SSE) in this process',
      sources.streamClients,
    );
  }

  turnFinished(flow: string, status: string, seconds: number): void {
    this.#turns.inc({ flow, status });
    this.#turnSeconds.observe({ flow }, seconds);
  }

  toolCalled(tool: string, status: string): void {
    this.#toolCalls.inc({ tool, status });
  }

  delivered(channel: string, outcome: 'sent' | 'retry' | 'failed'): void {
    this.#deliveries.inc({ channel, outcome });
  }

  modelCalled(outcome: string, seconds: number): void {
    this.#modelCalls.inc({ outcome });
    this.#modelSeconds.observe(seconds);
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.#requests.inc({ method, route, status: String(status) });
    this.#requestSeconds.observe({ method, route }, seconds);
  }
}
