import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/**
 * No job of this name: no `@ClusterSingleton` or `@LeaderOnly` method or runtime schedule on this node has it, and the
 * cluster keeps no history of it.
 */
export class UnknownJobError extends GatekeeperError {
  constructor(
    /** The name asked for (`Class.method`). */
    readonly job: string,
    known: readonly string[],
  ) {
    super(`No job "${job}" (jobs are named Class.method, a runtime schedule's id, or leader:<election>:<Class.method>${known.length > 0 ? `; this node has ${known.slice(0, 10).join(', ')}${known.length > 10 ? ', ...' : ''}` : ''})`);
  }
}
