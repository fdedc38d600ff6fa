import { StoreUnavailableError } from './store-unavailable.error';

/**
 * Start-up gave up on reaching the Hazelcast cluster within `connectTimeout`. Expected whenever no member runs
 * yet, so it is one line, not a stack: its message says what was tried and the ways forward, and `stack` is that
 * same line (it has no `cause`, whose stack Node would print too), so an unhandled rejection of it prints just
 * the line. A {@link StoreUnavailableError}, so existing `catch` blocks keep working.
 */
export class ClusterUnreachableError extends StoreUnavailableError {
  constructor(message: string) {
    super(message);
    this.stack = `${this.name}: ${this.message}`;
  }
}
