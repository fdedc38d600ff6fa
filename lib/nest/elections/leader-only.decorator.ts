import { nameProblem } from '../../core/names';
import { DEFAULT_ELECTION, MAX_ELECTION_NAME_LENGTH } from '../../elections/election';
import { LEADER_ONLY_ELECTIONS_PROPERTY, LEADER_ONLY_METADATA } from '../gatekeeper.constants';
import { ElectionsRuntime } from './elections.runtime';
import { methodName, wrapDecoratedMethod } from '../decorated-method';
import { invalidDecorator } from '../errors/decorator.errors';

/**
 * Runs the method only on the leader of `election` (default `'leader'`): on every call (a `@Cron`, `@Interval` or
 * `@Timeout` tick, or a direct call) it checks this node's own leadership lease, with no round trip; on the leader
 * it runs the method with the lease in async context (`ClusterService.currentLeadership()`), elsewhere it returns
 * `undefined` at once. The decorated method always returns a Promise. Names its election for the module, which
 * joins it at start-up (defining it with the defaults if nobody did).
 *
 * Works above or below the scheduling decorator and carries every other decorator's metadata over to the wrapped
 * method. The class must be a Nest provider (the elections are property-injected).
 *
 * @example
 * ```ts
 * @Cron(CronExpression.EVERY_30_SECONDS)
 * @LeaderOnly()
 * async distributeEvents(): Promise<void> { ... }
 * ```
 */
export function LeaderOnly(election: string = DEFAULT_ELECTION): MethodDecorator {
  const problem = nameProblem(election, { max: MAX_ELECTION_NAME_LENGTH });
  if (problem !== undefined) throw invalidDecorator('@LeaderOnly', problem, 'election');
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void => {
    const where = methodName(target, key);
    wrapDecoratedMethod(target, descriptor, {
      where: `@LeaderOnly on ${where}`,
      metadataKey: LEADER_ONLY_METADATA,
      metadata: election,
      service: ElectionsRuntime,
      property: LEADER_ONLY_ELECTIONS_PROPERTY,
      call: (elections, original, self, args) => elections.runIfLeader(election, where, () => original.apply(self, args)),
    });
  };
}
