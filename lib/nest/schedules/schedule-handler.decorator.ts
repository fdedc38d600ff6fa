import { SCHEDULE_HANDLER_METADATA } from '../gatekeeper.constants';
import { methodName } from '../decorated-method';
import { invalidDecorator } from '../errors/decorator.errors';

/**
 * Makes the method the handler `name` of schedules defined at runtime (`ScheduleService.upsert({ handler: name, ... })`):
 * every node whose code has it takes part in those schedules, and each run calls it with the schedule's `data`,
 * under the schedule's permit (so `GatekeeperService.currentLease()` and `ScheduleService.currentRun()` answer
 * inside it). One handler per name per application. The class must be a Nest provider.
 *
 * @example
 * ```ts
 * @ScheduleHandler('tenant-report')
 * async report(data: { tenant: string }): Promise<void> { ... }
 * ```
 */
export function ScheduleHandler(name: string): MethodDecorator {
  if (typeof name !== 'string' || !/^[A-Za-z0-9._:-]{1,100}$/.test(name)) {
    throw invalidDecorator('@ScheduleHandler', `must be 1 to 100 letters, digits or . _ : -, got ${JSON.stringify(name)}`, 'name');
  }
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void => {
    if (typeof descriptor.value !== 'function') throw invalidDecorator(`@ScheduleHandler('${name}') on ${methodName(target, key)}`, 'not a method');
    Reflect.defineMetadata(SCHEDULE_HANDLER_METADATA, name, descriptor.value as object);
  };
}
