import { Inject, Injectable, Logger } from '@nestjs/common';
import { ArmedSchedules } from '../../schedules/armed-schedules';
import type { ScheduleStore } from '../../schedules/schedule-store';
import type { CapabilityRuntime } from '../capability.runtime';
import { GatekeeperExplorer } from '../gatekeeper.explorer';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_SCHEDULE_STORE, SCHEDULE_HANDLER_METADATA } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { PermitsRuntime } from '../permits/permits.runtime';
import { CronTrigger } from '../schedule-metadata/cron-trigger';
import { OutageNotice } from '../signals/outage-notice';
import { ClusterSingletonRunner } from './cluster-singleton.runner';
import { JobRegistry } from './job-registry';
import { invalidDecorator } from '../errors/decorator.errors';

/**
 * Schedules defined at runtime, on this node ({@link ArmedSchedules}), wired to the module: the `@ScheduleHandler`
 * methods start-up finds, the app's cron package, the job registry, the runner and the permits' admin.
 * Used inside the module, not by applications.
 */
@Injectable()
export class RuntimeSchedules extends ArmedSchedules implements CapabilityRuntime {
  constructor(
    @Inject(GATEKEEPER_OPTIONS) options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_SCHEDULE_STORE) store: ScheduleStore,
    explorer: GatekeeperExplorer,
    jobs: JobRegistry,
    runner: ClusterSingletonRunner,
    permits: PermitsRuntime,
  ) {
    const logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
    super({
      store,
      handlers: () => handlersOf(explorer),
      calendar: (expression, timeZone) => CronTrigger.fromExpression(expression, timeZone),
      validateCron: (expression, timeZone) => CronTrigger.validate(expression, timeZone),
      jobs,
      tick: (job) => runner.run(job, { kind: 'tick' }),
      semaphores: permits.admin,
      by: options.holder.acquirer,
      clock: options.clock,
      storeTimeoutMs: options.storeTimeoutMs,
      clockSkewMs: options.clockSkewMs,
      log: logger,
      outage: new OutageNotice(logger, 'Runtime schedules', 'armed schedules keep their last known definition, and changes are heard once it answers'),
    });
  }
}

/** This node's `@ScheduleHandler` methods by name: one per name. */
function handlersOf(explorer: GatekeeperExplorer): Map<string, (data: unknown) => unknown> {
  const handlers = new Map<string, { where: string; call: (data: unknown) => unknown }>();
  for (const { where, metadata: name, instance, method } of explorer.discover<string>(SCHEDULE_HANDLER_METADATA)) {
    const other = handlers.get(name);
    if (other) throw invalidDecorator(`@ScheduleHandler('${name}') on ${where}`, `${other.where} is already its handler (one per name)`);
    handlers.set(name, { where, call: (data) => (method as (data: unknown) => unknown).call(instance, data) });
  }
  return new Map([...handlers].map(([name, { call }]) => [name, call]));
}
