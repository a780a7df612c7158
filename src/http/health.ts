import type { ModelStatus } from '../llm/model-health.ts';
import type { ChannelStatus } from '../observability/observed-gate.ts';

/** A timer worker that has not begun a pass nor fired a timer for this long is stuck (a pass sleeps ≤ 1 s). */
export const TIMER_WORKER_STALL_S = 300;
/** Timers due this long ago and not fired: no worker keeps up, in any process. */
export const TIMER_LATENESS_LIMIT_S = 300;
/** A delivery pending this long: the outbox does not drain (retries back off to 5 minutes at most). */
export const OUTBOX_AGE_LIMIT_S = 600;

/** What `/health` reads, as it was read. */
export interface HealthInputs {
  store: { ok: true } | { ok: false; problem: string };
  model?: ModelStatus | undefined;
  channels?: Readonly<Record<string, ChannelStatus>> | undefined;
  timerWorker?: { running: boolean; lastProgressAt: Date | null } | undefined;
  /** Null when the store did not answer in time. */
  queues?: { oldest_outbox_age_s: number | null; outbox_pending: number; timer_lateness_s: number | null } | null;
  /** Wall time now, for the timer worker's last sign of life. */
  now: Date;
}

export interface Health {
  status: 'ok' | 'degraded' | 'down';
  /** One line per reason the status is not ok, naming the dependency. */
  problems: string[];
}

/**
 * The overall status: `down` when the store cannot serve (nothing works; 503), `degraded` when
 * something fails but messages are kept and wait (the model, a channel, a stuck timer worker, a
 * backlog that does not drain; 200), else `ok`.
 */
export function overallHealth(inputs: HealthInputs): Health {
  if (!inputs.store.ok) return { status: 'down', problems: [`store: ${inputs.store.problem}`] };
  const problems: string[] = [];
  if (inputs.model?.state === 'failing') problems.push(`model: ${inputs.model.lastError ?? 'calls fail'}`);
  for (const [name, channel] of Object.entries(inputs.channels ?? {}))
    if (channel.state === 'failing')
      problems.push(`channel ${name}: ${channel.lastError ?? 'sends fail'} (${channel.consecutiveFailures} in a row)`);
  const worker = inputs.timerWorker;
  if (worker?.running && worker.lastProgressAt) {
    const silent = Math.round((inputs.now.getTime() - worker.lastProgressAt.getTime()) / 1000);
    if (silent > TIMER_WORKER_STALL_S) problems.push(`timer worker: stuck, no pass for ${silent} s`);
  }
  const queues = inputs.queues;
  if (queues?.timer_lateness_s != null && queues.timer_lateness_s > TIMER_LATENESS_LIMIT_S)
    problems.push(`timers: the oldest due timer is ${queues.timer_lateness_s} s late`);
  if (queues?.oldest_outbox_age_s != null && queues.oldest_outbox_age_s > OUTBOX_AGE_LIMIT_S)
    problems.push(
      `outbox: ${queues.outbox_pending} deliveries pending, the oldest for ${queues.oldest_outbox_age_s} s`,
    );
  return { status: problems.length > 0 ? 'degraded' : 'ok', problems };
}
