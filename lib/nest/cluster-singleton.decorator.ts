import { Inject } from '@nestjs/common';
import type { DurationInput } from '../gatekeeper/semaphore-definition';
import { CLUSTER_SINGLETON_METADATA, CLUSTER_SINGLETON_RUNNER_PROPERTY } from './gatekeeper.constants';
import { ClusterSingletonRunner } from './cluster-singleton.runner';
import { resolveClusterSingletonOptions, type ClusterSingletonOptions } from './cluster-singleton.options';

/**
 * Runs the method only on the node that holds a permit of `semaphore`: on every call (a `@Cron`, `@Interval` or
 * `@Timeout` tick, or a direct call), first acquire or refresh the permit; if denied, skip quietly (debug log
 * with the reason) and return `undefined`.
 *
 * Works above or below the scheduling decorator, and carries every other decorator's metadata over to the
 * wrapped method. The class must be a Nest provider (the runner is property-injected).
 *
 * @example
 * ```ts
 * @Cron(CronExpression.EVERY_MINUTE)
 * @ClusterSingleton('billing', '5m')
 * async charge() { ... }
 * ```
 */
export function ClusterSingleton(semaphore: string, duration?: DurationInput): MethodDecorator;
/** Options-object form: `@ClusterSingleton({ semaphore: 'export', duration: '10m', mode: 'release', lockAtLeastFor: '50s' })`. */
export function ClusterSingleton(options: ClusterSingletonOptions): MethodDecorator;
export function ClusterSingleton(semaphoreOrOptions: string | ClusterSingletonOptions, duration?: DurationInput): MethodDecorator {
  const options = resolveClusterSingletonOptions(semaphoreOrOptions, duration);
  return (target, key, descriptor: PropertyDescriptor) => {
    const original = descriptor.value as (...args: unknown[]) => unknown;
    const where = `${target.constructor.name}.${String(key)}`;
    if (typeof original !== 'function') throw new TypeError(`@ClusterSingleton on ${where}: not a method`);
    if (Reflect.hasMetadata(CLUSTER_SINGLETON_METADATA, original)) {
      throw new TypeError(`@ClusterSingleton on ${where}: applied twice`);
    }
    const wrapper = async function (this: Record<symbol, ClusterSingletonRunner | undefined>, ...args: unknown[]) {
      const runner = this[CLUSTER_SINGLETON_RUNNER_PROPERTY];
      if (!runner) {
        throw new Error(`@ClusterSingleton on ${where}: no GatekeeperModule in scope (import GatekeeperModule.forRoot(), global by default)`);
      }
      return runner.run(options, where, () => original.apply(this, args));
    };
    // Decorators applied before this one (below it) put their metadata on the original function.
    for (const metadataKey of Reflect.getMetadataKeys(original)) {
      Reflect.defineMetadata(metadataKey, Reflect.getMetadata(metadataKey, original), wrapper);
    }
    Reflect.defineMetadata(CLUSTER_SINGLETON_METADATA, options, wrapper);
    Object.defineProperty(wrapper, 'name', { value: original.name });
    descriptor.value = wrapper;
    if (!Reflect.hasOwnMetadata(CLUSTER_SINGLETON_RUNNER_PROPERTY, target)) {
      Reflect.defineMetadata(CLUSTER_SINGLETON_RUNNER_PROPERTY, true, target);
      Inject(ClusterSingletonRunner)(target, CLUSTER_SINGLETON_RUNNER_PROPERTY);
    }
    return descriptor;
  };
}
