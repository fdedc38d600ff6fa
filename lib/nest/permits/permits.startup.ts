import { Inject, Injectable, Logger } from '@nestjs/common';
import { KnownDefinitions } from '../../permits/known-definitions';
import type { PermitStore } from '../../permits/permit-store';
import { GatekeeperExplorer } from '../gatekeeper.explorer';
import { CLUSTER_SINGLETON_METADATA, GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from '../gatekeeper.constants';
import { permitsBackendKind } from '../options/backend-choice.options';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { scheduleIntervalMs } from '../schedule-metadata/schedule-interval.reader';

export type { DecoratedSemaphore } from '../../permits/known-definitions';

/**
 * The definitions this node knows and publishes ({@link KnownDefinitions}) as the module's provider: its options and
 * store, the explorer that finds the `@ClusterSingleton` methods, and their `@Interval` schedules. Used inside the
 * module, not by applications.
 */
@Injectable()
export class PermitsStartup extends KnownDefinitions {
  constructor(
    @Inject(GATEKEEPER_OPTIONS) options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) store: PermitStore,
    explorer: GatekeeperExplorer,
  ) {
    super(options, store, {
      methods: explorer,
      key: CLUSTER_SINGLETON_METADATA,
      intervalMs: scheduleIntervalMs,
      log: new Logger(GATEKEEPER_LOGGER_CONTEXT),
      backend: permitsBackendKind(options),
    });
  }
}
