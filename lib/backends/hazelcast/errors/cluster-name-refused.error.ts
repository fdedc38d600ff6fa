import { StoreUnavailableError } from '../../../core/errors/store-unavailable.error';

/**
 * A Hazelcast member answered the first connection but refused this client: its cluster has another name than the
 * client's (or, with security on, the credentials were refused). Not a member that is missing.
 */
export class ClusterNameRefusedError extends StoreUnavailableError {
  constructor(
    /** The member that refused (`host:port`). */
    readonly address: string,
    /** The cluster name the client asked for. */
    readonly clusterName: string,
  ) {
    super(`The Hazelcast member at ${address} answered but refused this client: it is not in a cluster named "${clusterName}" `
      + '(or, with security on, it refused the credentials)');
  }
}
