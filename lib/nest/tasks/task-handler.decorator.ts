import { methodName } from '../decorated-method';
import { TASK_HANDLER_METADATA } from '../gatekeeper.constants';
import { resolveTaskHandlerOptions, type TaskHandlerDecoratorOptions } from '../../tasks/task-handler.input';
import type { TaskHandlerOptions } from '../../tasks/task-handler';
import { taskIdPartProblem } from '../../tasks/task-id.rules';
import { invalidDecorator } from '../errors/decorator.errors';

/** What a task decorator records on its method, read by the module at start-up. */
export type TaskHandlerRegistration =
  | { readonly kind: 'task' | 'group-finished'; readonly type: string; readonly options: TaskHandlerOptions }
  | { readonly kind: 'invalid' }
  | {
      readonly kind: 'trigger';
      readonly type: string;
      readonly options: TaskHandlerOptions;
      /** The method's own body, which the task runs (the decorated method itself submits). */
      readonly body: (...args: unknown[]) => unknown;
    };

/**
 * Runs tasks of `type` on this node: the method gets the task's data and its {@link TaskContext} (`renewLease`,
 * `signal`, `epoch`, `submit` for sub-tasks); what it returns is the task's result. Throw `RetryLaterError` (with
 * a delay) or any error to retry with backoff up to `maxAttempts`, `InvalidTaskError` to give the task up at once.
 * A node claims only the types it has handlers for. One handler per type per node. The class must be a provider.
 *
 * @example
 * ```ts
 * @TaskHandler('recon-record-set', { lease: '5m', maxAttempts: 5 })
 * async reconcile(data: { from: number; to: number }, task: TaskContext) { ... }
 * ```
 */
export function TaskHandler(type: string, options?: TaskHandlerDecoratorOptions): MethodDecorator {
  validateType('@TaskHandler', type);
  return record('@TaskHandler', type, { kind: 'task', type, options: handlerOptions(`@TaskHandler('${type}')`, options) });
}

/**
 * Runs the join of every finished group of tasks of `type`, **exactly once per group**: the method gets the
 * group's {@link GroupJoinData} (each task's result or error, by number) and a {@link TaskContext}. Also runs, for
 * a task that submitted sub-tasks, once all of its sub-groups joined (the seed's recon example). Its result is the
 * join task's result.
 */
export function GroupFinishedHandler(type: string, options?: TaskHandlerDecoratorOptions): MethodDecorator {
  validateType('@GroupFinishedHandler', type);
  return record('@GroupFinishedHandler', type, { kind: 'group-finished', type, options: handlerOptions(`@GroupFinishedHandler('${type}')`, options) });
}

/**
 * Hears every task that ended invalid on this node (its handler threw `InvalidTaskError`): the method gets the task
 * and the error's message. Without one the module logs it. Either way the task is never retried, counts as ended
 * in its group, and is kept (state `invalid`) for operators until the retention window passes. One per app.
 */
export function InvalidTaskHandler(): MethodDecorator {
  return record('@InvalidTaskHandler', undefined, { kind: 'invalid' });
}

function record(name: string, type: string | undefined, registration: TaskHandlerRegistration): MethodDecorator {
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void => {
    const where = `${name}${type === undefined ? '' : `('${type}')`} on ${methodName(target, key)}`;
    if (typeof descriptor.value !== 'function') throw invalidDecorator(where, 'not a method');
    if (Reflect.hasMetadata(TASK_HANDLER_METADATA, descriptor.value)) throw invalidDecorator(where, 'the method already has a task decorator');
    Reflect.defineMetadata(TASK_HANDLER_METADATA, registration, descriptor.value);
  };
}

/** A task type: a non-empty string without `:` or `#` (they separate the parts of task ids). */
export function validateType(decorator: string, type: string): void {
  const problem = taskIdPartProblem(type);
  if (problem !== undefined) throw invalidDecorator(decorator, `the task type ${problem}`);
}

/** A task decorator's options, validated for the worker; an error names the decorator, the type and the field. */
export function handlerOptions(where: string, options: TaskHandlerDecoratorOptions | undefined): TaskHandlerOptions {
  return resolveTaskHandlerOptions(where, options, (field, reason) => invalidDecorator(where, reason, field));
}
