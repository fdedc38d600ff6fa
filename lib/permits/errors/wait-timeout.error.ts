import { GatekeeperError } from '../../core/errors/gatekeeper.error';
import type { DenyReason } from '../deny-reason';

/**
 * A wait gave up at its timeout: `GatekeeperService.acquire()` got no permit (`kind: 'permit'`, with the last
 * denial's reason), or `ClusterService.waitForLeader()` saw no leader (`kind: 'leader'`).
 */
export class WaitTimeoutError extends GatekeeperError {
  constructor(
    /** What was waited for: a permit of a semaphore, or the leader of an election. */
    readonly kind: 'permit' | 'leader',
    /** The semaphore (`permit`) or the election (`leader`) asked for. */
    readonly id: string,
    /** How long the caller waited, in milliseconds. */
    readonly timeoutMs: number,
    /** Why the last attempt was denied (`permit` only). */
    readonly lastReason?: DenyReason,
  ) {
    super(kind === 'permit'
      ? `Semaphore "${id}": no permit within ${timeoutMs} ms (last denial: ${lastReason})`
      : `Election "${id}": no leader within ${timeoutMs} ms`);
  }
}
