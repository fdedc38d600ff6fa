import { Inject } from '@nestjs/common';
import { DEFAULT_ELECTION } from '../elections/election';
import { LEADER_ONLY_ELECTIONS_PROPERTY, LEADER_ONLY_METADATA } from './gatekeeper.constants';
import { LeaderElections } from './leader-elections';

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
  if (typeof election !== 'string' || election.trim() === '') throw new TypeError(`@LeaderOnly: the election must be a non-empty string, got ${JSON.stringify(election)}`);
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void => {
    const original = descriptor.value as (...args: unknown[]) => unknown;
    const where = `${target.constructor.name}.${String(key)}`;
    if (typeof original !== 'function') throw new TypeError(`@LeaderOnly on ${where}: not a method`);
    if (Reflect.hasMetadata(LEADER_ONLY_METADATA, original)) throw new TypeError(`@LeaderOnly on ${where}: applied twice`);
    const wrapper = async function (this: Record<symbol, LeaderElections | undefined>, ...args: unknown[]) {
      const elections = this[LEADER_ONLY_ELECTIONS_PROPERTY];
      if (!elections) throw new Error(`@LeaderOnly on ${where}: no GatekeeperModule in scope (import GatekeeperModule.forRoot(), global by default)`);
      return elections.runIfLeader(election, where, () => original.apply(this, args));
    };
    for (const metadataKey of Reflect.getMetadataKeys(original)) {
      Reflect.defineMetadata(metadataKey, Reflect.getMetadata(metadataKey, original), wrapper);
    }
    Reflect.defineMetadata(LEADER_ONLY_METADATA, election, wrapper);
    Object.defineProperty(wrapper, 'name', { value: original.name });
    descriptor.value = wrapper;
    if (!Reflect.hasOwnMetadata(LEADER_ONLY_ELECTIONS_PROPERTY, target)) {
      Reflect.defineMetadata(LEADER_ONLY_ELECTIONS_PROPERTY, true, target);
      Inject(LeaderElections)(target, LEADER_ONLY_ELECTIONS_PROPERTY);
    }
  };
}
