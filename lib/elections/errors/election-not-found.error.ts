import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** An operator named an election the cluster does not have (admin API 404, CLI exit 1). */
export class ElectionNotFoundError extends GatekeeperError {
  constructor(
    /** The election's name, as given. */
    readonly election: string,
    /** The elections the cluster has, by name. */
    readonly known: readonly string[],
  ) {
    super(
      `Election "${election}" is not in the cluster (no semaphore "election:${election}"); ` +
        (known.length ? `elections: ${known.join(', ')}` : 'the cluster has no elections'),
    );
  }
}
