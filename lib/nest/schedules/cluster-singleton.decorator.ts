import type { DurationInput } from '../../permits/semaphore-definition';
import { CLUSTER_SINGLETON_METADATA, CLUSTER_SINGLETON_RUNNER_PROPERTY } from '../gatekeeper.constants';
import { ClusterSingletonRunner } from './cluster-singleton.runner';
import { methodName, wrapDecoratedMethod } from '../decorated-method';
import { resolveClusterSingletonOptions, type ClusterSingletonOptions } from './cluster-singleton.options';

/**
 * The method decorator `@ClusterSingleton` returns. Its type accepts only methods whose declared return type stays
 * true once wrapped: `void`, `Promise<void>`, or a Promise whose value may be `undefined` (a skipped tick). A
 * synchronous method that returns a value is a compile error, since the wrapper returns a Promise.
 */
export type ClusterSingletonDecorator = <T extends (...args: never[]) => unknown>(
  target: object,
  key: string | symbol,
  // `unknown` (no constraint) for a method whose declared type tells the truth once decorated, else an object type
  // whose only property explains, in the compiler's error, what to change.
  descriptor: TypedPropertyDescriptor<T> & (0 extends 1 & T
    ? unknown // an untyped (`any`) method: nothing to check
    : T extends (...args: never[]) => infer R
    ? [R] extends [void | undefined | Promise<void | undefined>] // nothing, or a Promise of nothing
      ? unknown
      : R extends Promise<infer V>
        ? undefined extends V
          ? unknown
          : { '@ClusterSingleton': 'a skipped tick resolves to undefined: declare Promise<T | undefined>, or Promise<void>' }
        : { '@ClusterSingleton': 'the decorated method returns a Promise: declare it async, or return void' }
    : { '@ClusterSingleton': 'applies to methods only' }),
) => void;

/**
 * Runs the method only on the node that holds a permit of `semaphore`: on every call (a `@Cron`, `@Interval` or
 * `@Timeout` tick, or a direct call), first acquire or refresh the permit; if denied, skip quietly (a `verbose`
 * line with the reason) and resolve to `undefined`. The decorated method always returns a Promise; its type must say
 * so (see {@link ClusterSingletonDecorator}).
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
export function ClusterSingleton(semaphore: string, duration?: DurationInput): ClusterSingletonDecorator;
/** Options-object form: `@ClusterSingleton({ semaphore: 'export', duration: '10m', mode: 'release', lockAtLeastFor: '50s' })`. */
export function ClusterSingleton(options: ClusterSingletonOptions): ClusterSingletonDecorator;
export function ClusterSingleton(semaphoreOrOptions: string | ClusterSingletonOptions, duration?: DurationInput): ClusterSingletonDecorator {
  const options = resolveClusterSingletonOptions(semaphoreOrOptions, duration);
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void => {
    const where = methodName(target, key);
    wrapDecoratedMethod(target, descriptor, {
      where: `@ClusterSingleton on ${where}`,
      metadataKey: CLUSTER_SINGLETON_METADATA,
      metadata: options,
      service: ClusterSingletonRunner,
      property: CLUSTER_SINGLETON_RUNNER_PROPERTY,
      call: (runner, original, self, args) => runner.tick(options, where, () => original.apply(self, args)),
    });
  };
}
