import { GatekeeperError } from './gatekeeper.error';

/**
 * A named thing the call needs does not exist: a semaphore with no definition, an election this node does not stand
 * in or the cluster does not have, an allocation neither declared nor defined, a task never submitted (or purged), a
 * job no node has, a schedule never defined (or removed). The admin API answers it 404 with `{ [kind]: id, reason }`
 * (`reason` is `UNKNOWN_` and the kind in capitals, e.g. `UNKNOWN_JOB`); the CLI exits 1.
 */
export class NotFoundError extends GatekeeperError {
  constructor(
    /** What kind of thing was asked for. */
    readonly kind: 'semaphore' | 'election' | 'allocation' | 'task' | 'job' | 'schedule',
    /** Its name or id, as asked. */
    readonly id: string,
    /** What is wrong and how to fix it, naming the thing. */
    message: string,
    /** The names of that kind there are, when the error lists them (the cluster's elections, this node's jobs). */
    readonly known?: readonly string[],
  ) {
    super(message);
  }
}
