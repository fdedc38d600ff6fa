import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `check` until it returns a value other than `undefined`/`false`, or fails after `timeoutMs` with `what`. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 25 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await sleep(intervalMs);
  }
}
