import { ONCE_PER_TRIGGER_TASKS_PROPERTY, TASK_HANDLER_METADATA } from '../gatekeeper.constants';
import { handlerOptions, validateType } from './task-handler.decorator';
import type { TaskHandlerDecoratorOptions } from '../../tasks/task-handler.input';
import { TasksRuntime } from './tasks.runtime';
import { methodName, wrapDecoratedMethod } from '../decorated-method';

/**
 * Runs a `@Cron` method once per trigger, on one node (seed 004's scheduling): every node keeps its own schedule,
 * and each tick only submits the task `<type>:<trigger instant>` (ISO time of the scheduled instant, the same on
 * every node), which exists once; one node claims it and runs the method's body under a lease, with the usual
 * retries, and gets its {@link TaskContext} as the only argument. A node that fires late or after a redeploy finds
 * the id remembered (for the tasks' retention window) and does not run it again. The decorated method resolves to
 * the task as submitted (or as found), or `undefined` for a tick the cron package fired at an instant
 * that is not one of the expression's (see the daylight-saving rules in docs/time-zones.md).
 *
 * Works above or below `@Cron`. The class must be a provider; its nodes must run a `GatekeeperModule`.
 *
 * @example
 * ```ts
 * @Cron('0 1 * * *')
 * @OncePerTrigger('check-database', { lease: '5m' })
 * async checkDatabase(task: TaskContext): Promise<void> { ... }
 * ```
 */
export function OncePerTrigger(type: string, options?: TaskHandlerDecoratorOptions): MethodDecorator {
  validateType('@OncePerTrigger', type);
  const resolved = handlerOptions(`@OncePerTrigger('${type}')`, options);
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void => {
    const body = descriptor.value as (...args: unknown[]) => unknown;
    const where = `@OncePerTrigger('${type}') on ${methodName(target, key)}`;
    // The wrapper (what @Cron calls) submits the trigger's task; the task runs the method's own body.
    const wrapper: (...args: unknown[]) => Promise<unknown> = wrapDecoratedMethod(target, descriptor, {
      where,
      metadataKey: TASK_HANDLER_METADATA,
      metadata: { kind: 'trigger', type, options: resolved, body },
      twice: 'the method already has a task decorator',
      service: TasksRuntime,
      property: ONCE_PER_TRIGGER_TASKS_PROPERTY,
      call: (tasks): Promise<unknown> => tasks.submitTrigger(type, wrapper, where),
    });
  };
}
