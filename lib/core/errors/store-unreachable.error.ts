import { StoreUnavailableError } from './store-unavailable.error';

/**
 * Start-up could not reach the store: the Hazelcast cluster, the PostgreSQL or the Redis server did not answer within
 * `connectTimeout`, or refused this node for good (a refused login, a missing database). Expected whenever the store
 * is not up yet or the address is wrong, so it is one line, not a stack: its message names the store, the address
 * (without its password), where the address came from, and the ways forward, and `stack` is that
 * same line (it has no `cause`, whose stack Node would print too), so an unhandled rejection of it prints just
 * the line. A {@link StoreUnavailableError}, so existing `catch` blocks keep working.
 */
export class StoreUnreachableError extends StoreUnavailableError {
  constructor(message: string) {
    super(message);
    this.printAsOneLine();
  }
}
