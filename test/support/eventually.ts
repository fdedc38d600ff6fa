import { eventually as poll } from '../../lib/testing/eventually';

/**
 * Polls `check` until it returns a value other than `undefined`/`false`, or fails after `timeoutMs` naming `what`
 * (the contract suites' poll, with the defaults the project's own tests use).
 */
export function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 10_000, intervalMs = 25 } = {},
): Promise<T> {
  return poll(what, check, timeoutMs, intervalMs);
}
