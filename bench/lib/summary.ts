// The markdown summary: per group, the medians over rounds with their spread, and ratios against
// the group's baselines taken round by round.
import { roundRatio, spread, type Result } from './rounds.ts';

/** One run of the orchestrator, measured over every round. */
export interface Measured {
  group: string;
  name: string;
  file: string;
  /** Runs compared with each other share a mode ('sequential', 'saturated'). */
  mode?: string;
  /** The group's floor (or baseline) for its mode; `peer` marks the equal-work peer. */
  baseline?: boolean;
  peer?: boolean;
  /** Each round's report, in round order; null where that round's process failed. */
  rounds: Array<Result | null>;
  /** Medians of every figure over the rounds. */
  result: Result;
}

export const fmt = (value: number | undefined, digits = 1) =>
  typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '—';
const withSpread = (run: Measured, path: string, digits = 0) => {
  const { min, max } = spread(run.rounds, path);
  return `${fmt(pickMedian(run, path), digits)} (${fmt(min, digits)}–${fmt(max, digits)})`;
};
const pickMedian = (run: Measured, path: string) =>
  path.split('.').reduce((value, key) => value?.[key], run.result as Result | undefined) as unknown as number;
const partner = (runs: Measured[], run: Measured, role: 'baseline' | 'peer') =>
  runs.find((other) => other[role] && other.mode === run.mode);

/** `a / b` of a figure, as "N× slower" (throughputs) or "N×" (costs), against a partner run. */
function versus(run: Measured, other: Measured | undefined, path: string, kind: 'throughput' | 'cost'): string {
  if (!other) return '—';
  if (other === run) return '1×';
  const ratio =
    kind === 'throughput' ? roundRatio(other.rounds, run.rounds, path) : roundRatio(run.rounds, other.rounds, path);
  if (kind === 'cost') return `${fmt(ratio, 2)}×`;
  return ratio < 1 ? `${fmt(1 / ratio, 1 / ratio < 10 ? 2 : 1)}× faster` : `${fmt(ratio, ratio < 10 ? 2 : 1)}× slower`;
}

/** A markdown table row: `| a | b | … |`. */
const tableRow = (cells: string[]) => `| ${cells.join(' | ')} |`;

const writeCells = (result: Result) => [
  // PostgreSQL: statements sent behind one in flight share its round trip (pipeline mode).
  result.perTurn?.roundTrips === undefined
    ? fmt(result.perTurn?.statements)
    : `${fmt(result.perTurn.statements)} (${fmt(result.perTurn.roundTrips)} round trips)`,
  fmt(result.perTurn?.commits, 2),
  fmt((result.perTurn?.bytesWritten ?? Number.NaN) / 1024),
];

export function turnTable(runs: Measured[]): string[] {
  const lines = [
    '| turn workload | turns/s (min–max) | p50 ms | p99 ms | statements/turn | commits/turn | KiB written/turn ' +
      '| CPU ms/turn | peak RSS MiB | DB MiB | vs floor (turns/s) | vs equal-work peer |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const run of runs) {
    const r = run.result;
    lines.push(
      tableRow([
        ...turnCells(run),
        fmt(r.perTurn?.cpuMs, 3),
        fmt(r.peakRssMiB),
        fmt(r.databaseMiB),
        versus(run, partner(runs, run, 'baseline'), 'turnsPerSecond', 'throughput'),
        versus(run, partner(runs, run, 'peer'), 'turnsPerSecond', 'throughput'),
      ]),
    );
  }
  return lines;
}

/** A turn run's name, throughput, latency and what it wrote: the first cells of its row. */
function turnCells(run: Measured): string[] {
  const r = run.result;
  return [
    run.name,
    withSpread(run, 'turnsPerSecond'),
    fmt(r.latencyMs.p50, 2),
    fmt(r.latencyMs.p99, 2),
    ...writeCells(r),
  ];
}

export function assistantTable(runs: Measured[]): string[] {
  const lines = [
    '| assistant flow on SQLite (scripted instant model, 10 concurrent conversations) | turns/s (min–max) | ' +
      'p50 ms | p99 ms | statements/turn | commits/turn | KiB written/turn | vs the plain reply |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const run of runs) {
    lines.push(
      tableRow([...turnCells(run), versus(run, partner(runs, run, 'baseline'), 'turnsPerSecond', 'throughput')]),
    );
  }
  return lines;
}

export function httpTable(runs: Measured[]): string[] {
  const lines = [
    '| HTTP inbound → webhook delivery (20 connections) | messages/s (min–max) | server CPU ms/message | tool ' +
      'calls/turn | acks/s | ack p50 / p99 ms | message → delivery p50 / p99 ms | delivered / sent | vs floor ' +
      '(messages/s) | CPU vs floor |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const run of runs) {
    const r = run.result;
    const floor = partner(runs, run, 'baseline');
    lines.push(
      tableRow([
        run.name,
        withSpread(run, 'messagesPerSecond'),
        fmt(r.cpuMsPerMessage, 2),
        fmt(r.toolCallsPerTurn, 2),
        fmt(r.ackPerSecond, 0),
        `${fmt(r.ackLatencyMs.p50, 0)} / ${fmt(r.ackLatencyMs.p99, 0)}`,
        `${fmt(r.e2eMs.p50, 0)} / ${fmt(r.e2eMs.p99, 0)}`,
        `${fmt(r.delivered, 0)} / ${fmt(r.sent, 0)}`,
        versus(run, floor, 'messagesPerSecond', 'throughput'),
        versus(run, floor, 'cpuMsPerMessage', 'cost'),
      ]),
    );
  }
  lines.push(
    '',
    'Messages/s: replies delivered ÷ (first request → last delivery). Server CPU: utime + stime of the server ' +
      'process (/proc/<pid>/stat, 10 ms ticks) over that time ÷ replies. Tool calls/turn: what the turns did ' +
      "(PromptPipe's offline model calls 0–2 tools depending on the flow's state; the floor always 2).",
  );
  return lines;
}

export function scaleTable(runs: Measured[]): string[] {
  const lines = [
    '| scale-out (offline model, 50 concurrent senders, affinity by phone hash) | turns/s (min–max) | CPU ' +
      'ms/turn: servers + PG backends | of which PG backends | WAL KiB/turn | 503s retried | vs 1 process on ' +
      'PostgreSQL (turns/s) | CPU/turn vs it | message → reply p50 / p99 ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const run of runs) {
    const r = run.result;
    const base = partner(runs, run, 'baseline');
    const speedup = base ? (base === run ? 1 : roundRatio(run.rounds, base.rounds, 'turnsPerSecond')) : Number.NaN;
    lines.push(
      tableRow([
        run.name,
        withSpread(run, 'turnsPerSecond'),
        fmt(r.cpuMsPerTurn.total, 2),
        r.store === 'sqlite' ? '—' : fmt(r.cpuMsPerTurn.postgres, 2),
        r.store === 'sqlite' ? '—' : fmt(r.walBytesPerTurn / 1024),
        fmt(r.unavailable, 0),
        `${fmt(speedup, 2)}×`,
        versus(run, base, 'cpuMsPerTurn.total', 'cost'),
        `${fmt(r.e2eMs.p50, 0)} / ${fmt(r.e2eMs.p99, 0)}`,
      ]),
    );
  }
  lines.push(
    '',
    'CPU: the server processes plus the PostgreSQL backends of their connections (pg_stat_activity by ' +
      "application_name), from /proc/<pid>/stat over the timed part ÷ replies; not the bench's own load generator " +
      "and sink, nor PostgreSQL's shared background processes. WAL: records of the bench database (pg_walinspect).",
  );
  return lines;
}

/** The one-line groups (timers, memory, ws, study-export): medians over the rounds. */
export function lineItems(runs: Measured[]): string[] {
  return runs.map((run) => {
    const r = run.result;
    switch (run.group) {
      case 'timers':
        return (
          `- ${run.name}: ${r.fired}/${r.timers} fired, ${r.duplicates} twice, ${r.early} early; ` +
          `lateness p50 ${r.latenessMs.p50} ms, p99 ${withSpread(run, 'latenessMs.p99')} ms, ` +
          `max ${r.latenessMs.max} ms; peak RSS ${r.peakRssMiB} MiB`
        );
      case 'memory':
        return (
          `- ${run.name}: ${fmt(r.heapPerConversationBytes, 0)} bytes of heap ` +
          `and ${withSpread(run, 'rssPerConversationBytes')} bytes of RSS per conversation ` +
          `(heap ${r.heapAfterMiB} MiB after ${r.conversations})`
        );
      case 'study-export':
        return (
          `- ${run.name}: ${withSpread(run, 'seconds', 1)} s for ${r.rows.toLocaleString('en')} rows ` +
          `(${fmt(r.bytes / 2 ** 20, 1)} MiB ZIP; server CPU ${fmt(r.whole.serverCpuSeconds, 1)} s); ` +
          `server RSS ${fmt(r.whole.rssBeforeMiB, 0)} MiB before, peak ${fmt(r.whole.peakRssMiB, 0)} ` +
          `(+${withSpread(run, 'whole.growthMiB')} MiB; a tenth of the study, ${r.tenthParticipants} participants: ` +
          `+${fmt(r.tenth.growthMiB, 0)}); ` +
          `with V8's heap capped (${r.cappedHeap}): +${withSpread(run, 'capped.growthMiB')} MiB ` +
          `in ${fmt(r.capped.seconds, 1)} s (a tenth: +${fmt(r.cappedTenth.growthMiB, 0)})`
        );
      default:
        return (
          `- ${run.name}: p50 ${r.relayMs.p50} ms, p99 ${withSpread(run, 'relayMs.p99', 2)} ms ` +
          `over ${r.tokens} tokens; ${withSpread(run, 'eventsPerSecond')} events/s on one conversation`
        );
    }
  });
}
