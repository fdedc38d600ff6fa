import { eventually as poll } from '../../lib/testing/eventually';

/**
 * Polls `check` until it returns a value other than `undefined`/`false`, or fails after `timeoutMs` naming `what`
 * (the contract suites' poll, with the defaults the project's own tests use). Its failure is an `Error` of the
 * test's own realm (node:assert's `AssertionError` is not one to Jest's `expect.any(Error)`).
 */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 25 } = {},
): Promise<T> {
  try {
    return await poll(what, check, timeoutMs, intervalMs);
  } catch (error) {
    throw new Error((error as Error).message);
  }
}
