import type { Permit } from './permit';
import type { SemaphoreDefinition } from './semaphore-definition';

/** One semaphore as seen in the cluster: its definition (if any) and its live permits. */
export interface SemaphoreStatus {
  /** The semaphore's name. */
  readonly name: string;
  /** Its definition, or `undefined` if it was removed (its entry stays, so tokens never go back). */
  readonly definition: SemaphoreDefinition | undefined;
  /** Live permits, oldest grant first (a revoked one stays until its holder lets go or it expires). */
  readonly permits: readonly Permit[];
  /** The highest fencing token granted so far (`undefined` if none was ever granted). */
  readonly lastToken: number | undefined;
  /** Set while the entry recovers from possible data loss: nothing is granted before this time (epoch ms). */
  readonly recoveringUntil?: number;
}
