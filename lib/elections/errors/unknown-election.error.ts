import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** An election was asked about that this node does not stand in. */
export class UnknownElectionError extends GatekeeperError {
  constructor(
    /** The election's name. */
    readonly election: string,
    /** Where it was named (a decorated method), if known. */
    where?: string,
  ) {
    super(
      `Election "${election}"${where ? ` (named by ${where})` : ''} is not one this node stands in: add it to the module's ` +
        "`elections` option (e.g. elections: ['leader']), or name it in @LeaderOnly / ClusterService.whileLeader",
    );
  }
}
