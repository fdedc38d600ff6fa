import { Inject } from '@nestjs/common';
import { ONCE_PER_TRIGGER_TASKS_PROPERTY, TASK_HANDLER_METADATA } from './gatekeeper.constants';
import { validateType } from './task-handler.decorator';
import { resolveTaskHandlerOptions, type TaskHandlerDecoratorOptions } from './tasks.options';
import { Tasks } from './tasks.runtime';

/**
 * Runs a `@Cron` method once per trigger, on one node (seed 004's scheduling): every node keeps its own schedule,
 * and each tick only submits the task `<type>:<trigger instant>` (ISO time of the scheduled instant, the same on
 * every node), which exists once; one node claims it and runs the method's body under a lease, with the usual
 * retries, and gets its {@link TaskContext} as the only argument. A node that fires late or after a redeploy finds
 * the id remembered (for the tasks' retention window) and does not run it again. The decorated method resolves to
 * the task as submitted (or as found).
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
  const resolved = resolveTaskHandlerOptions(`@OncePerTrigger('${type}')`, options);
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void => {
    const body = descriptor.value as (...args: unknown[]) => unknown;
    const where = `@OncePerTrigger('${type}') on ${target.constructor.name}.${String(key)}`;
    if (typeof body !== 'function') throw new TypeError(`${where}: not a method`);
    if (Reflect.hasMetadata(TASK_HANDLER_METADATA, body)) throw new TypeError(`${where}: the method already has a task decorator`);
    const wrapper = async function (this: Record<symbol, Tasks | undefined>) {
      const tasks = this[ONCE_PER_TRIGGER_TASKS_PROPERTY];
      if (!tasks) throw new Error(`${where}: no GatekeeperModule in scope (import GatekeeperModule.forRoot(), global by default)`);
      return tasks.submitTrigger(type, wrapper, where);
    };
    // Decorators applied before this one (below it, e.g. @Cron) put their metadata on the original function.
    for (const metadataKey of Reflect.getMetadataKeys(body)) Reflect.defineMetadata(metadataKey, Reflect.getMetadata(metadataKey, body), wrapper);
    Reflect.defineMetadata(TASK_HANDLER_METADATA, { kind: 'trigger', type, options: resolved, body }, wrapper);
    Object.defineProperty(wrapper, 'name', { value: body.name });
    descriptor.value = wrapper;
    if (!Reflect.hasOwnMetadata(ONCE_PER_TRIGGER_TASKS_PROPERTY, target)) {
      Reflect.defineMetadata(ONCE_PER_TRIGGER_TASKS_PROPERTY, true, target);
      Inject(Tasks)(target, ONCE_PER_TRIGGER_TASKS_PROPERTY);
    }
  };
}
