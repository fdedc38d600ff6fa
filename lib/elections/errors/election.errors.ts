import { NotFoundError } from '../../core/errors/not-found.error';
import { LeaseLostError } from '../../core/errors/lease-lost.error';

/** An election was asked about that this node does not stand in (`where`: the decorated method naming it, if known). */
export function unknownElection(election: string, where?: string): NotFoundError {
  return new NotFoundError(
    'election',
    election,
    `Election "${election}"${where ? ` (named by ${where})` : ''} is not one this node stands in: add it to the module's ` +
      "`elections` option (e.g. elections: ['leader']), or name it in @LeaderOnly / ClusterService.whileLeader",
  );
}

/** An operator named an election the cluster does not have (`known`: those it has, by name). */
export function electionNotFound(election: string, known: readonly string[]): NotFoundError {
  return new NotFoundError(
    'election',
    election,
    `Election "${election}" is not in the cluster (no semaphore "election:${election}"); ` +
      (known.length ? `elections: ${known.join(', ')}` : 'the cluster has no elections'),
    known,
  );
}

/** This node is no longer the leader of `election` (`LeaderLease.assertValid()`, the lease signal's reason). */
export function leadershipLost(election: string, epoch: number, reason: string): LeaseLostError {
  return new LeaseLostError('leadership', election, reason, `Leadership of "${election}" (epoch ${epoch}) is lost: ${reason}`, epoch);
}
