/** Polls `check` until it returns a truthy value or the deadline passes. No fixed sleeps. */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  options: { timeoutMs?: number; what?: string; intervalMs?: number } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last as NonNullable<T>;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 10));
  }
  throw new Error(`timed out waiting for ${options.what ?? 'condition'} (last value: ${JSON.stringify(last)})`);
}
