/**
 * Marks a promise whose answer the caller will await later, after issuing more work (a pipelined
 * unit of work, decision 020). Should something else fail first and the caller never reach its
 * await, the promise's own failure is not an unhandled rejection (which would end the process):
 * the unit of work fails anyway, with the error that came first.
 */
export function awaitedLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
