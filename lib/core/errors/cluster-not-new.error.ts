import { GatekeeperError } from './gatekeeper.error';

/** One sign that a store held gatekeeper state before, which a declaration that it is new must not erase. */
export interface EarlierLife {
  /** Where it was found: a semaphore (`semaphore "billing" (map gatekeeper.semaphores)`), or `canaries`. */
  readonly where: string;
  /** What was found, in words. */
  readonly reason: string;
}

/**
 * `store init` refused: the cluster holds gatekeeper state from an earlier life (permits were granted, or a node
 * rebuilt a semaphore it knew before the data was lost), so it is a restarted cluster, not a new one, and its
 * recovery wait is what keeps two holders apart.
 */
export class ClusterNotNewError extends GatekeeperError {
  constructor(
    /** Every sign found, each naming where. */
    readonly evidence: readonly EarlierLife[],
  ) {
    const shown = evidence.slice(0, 5).map((e) => `${e.where}: ${e.reason}`).join('; ');
    const more = evidence.length > 5 ? `; and ${evidence.length - 5} more` : '';
    super(
      `refused, nothing changed: this cluster held gatekeeper state before (${shown}${more}). After a loss, each semaphore ` +
        'waits on its own until every permit the lost state could have granted has expired; declaring the cluster new would cut that wait short',
    );
  }
}
