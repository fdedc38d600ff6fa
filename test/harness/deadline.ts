/* Whether a call answers within a deadline, without cancelling it: a stalled call is kept to watch it finish later. */
import { setTimeout as sleep } from 'node:timers/promises';

/** The outcome of {@link within}: settled in time (with value or error), or still pending at the deadline. */
export type Within<T> = { settled: true; ms: number; value?: T; error?: unknown } | { settled: false; ms: number };

/** Waits for `promise` up to `ms`; the promise keeps running either way (await it again to see how it ends). */
export async function within<T>(promise: Promise<T>, ms: number): Promise<Within<T>> {
  const started = Date.now();
  const timer = new AbortController();
  const outcome = await Promise.race([
    promise.then((value) => ({ settled: true as const, value }), (error: unknown) => ({ settled: true as const, error })),
    sleep(ms, { settled: false as const }, { signal: timer.signal }).catch(() => ({ settled: false as const })),
  ]);
  timer.abort();
  return { ...outcome, ms: Date.now() - started };
}
