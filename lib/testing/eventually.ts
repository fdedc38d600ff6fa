import assert from 'node:assert/strict';
import { setTimeout as pause } from 'node:timers/promises';

/**
 * Polls `check` until it returns anything but `undefined` or `false`, and returns that; after `timeoutMs` fails with
 * an `AssertionError` naming `what` (and the check's last error, if it threw). For what another node, or a feed, makes
 * true a moment later: a suite waits for it, never for a fixed time. Checks every `intervalMs`.
 */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  intervalMs = 10,
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
    if (Date.now() > deadline) throw new assert.AssertionError({ message: `not within ${timeoutMs} ms: ${what}${last === undefined ? '' : ` (last: ${String(last)})`}` });
    await pause(intervalMs);
  }
}
