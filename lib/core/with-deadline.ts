import { StoreTimeoutError } from './errors/store-timeout.error';

/**
 * Waits for `operation` at most `timeoutMs` (no limit when undefined). The operation itself is not cancelled:
 * the Hazelcast client cannot cancel an invocation, so its outcome becomes unknown and the caller treats it so.
 */
export async function withDeadline<T>(operation: Promise<T>, timeoutMs: number | undefined, what: string): Promise<T> {
  if (timeoutMs === undefined) return operation;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(`${what}: no answer within ${timeoutMs} ms`)), Math.max(0, timeoutMs));
    timer.unref();
  });
  try {
    return await Promise.race([operation, deadline]);
  } finally {
    clearTimeout(timer);
    operation.catch(() => undefined); // a late failure of an abandoned call is not an unhandled rejection
  }
}
