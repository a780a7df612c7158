/**
 * Crash injection for the crash tests, nothing else: with `PROMPTPIPE_FAILPOINT=<name>` the
 * process kills itself (SIGKILL: no cleanup, no flush) the moment it reaches that point, after
 * skipping the first `PROMPTPIPE_FAILPOINT_SKIP` hits. Unset in every real deployment; read once.
 */
const armed = process.env.PROMPTPIPE_FAILPOINT;
let skip = Number(process.env.PROMPTPIPE_FAILPOINT_SKIP ?? 0);

export type FailpointName = 'timer.after-claim' | 'outbox.after-send' | 'desk.after-change';

export function failpoint(name: FailpointName): void {
  if (armed !== name) return;
  if (skip-- > 0) return;
  process.kill(process.pid, 'SIGKILL');
}
