import { ShuttingDownError } from '../errors/shutting-down.error';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AllocationParts } from '../../allocation/allocation-parts';
import { allocationPermitsOf } from '../../allocation/allocation-permits';
import type { PermitStore } from '../../permits/permit-store';
import type { CapabilityRuntime } from '../capability.runtime';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { PermitsRuntime } from '../permits/permits.runtime';
import { GatekeeperEvents } from '../signals/gatekeeper-events';

/**
 * The allocations this node takes part in ({@link AllocationParts}), on the module's permit engine: started once the
 * module is ready and stopped gracefully before permits are released at shutdown; hand-overs go to the log and the
 * lifecycle events. `AllocationService` serves it to applications.
 * Used inside the module, not by applications.
 */
@Injectable()
export class AllocationRuntime implements CapabilityRuntime {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  /** This node's parts, which `AllocationService` serves. */
  readonly parts: AllocationParts;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) store: PermitStore,
    runtime: PermitsRuntime,
    events: GatekeeperEvents,
  ) {
    this.parts = new AllocationParts({
      holder: options.holder,
      clock: options.permitClock,
      clockSkewMs: options.clockSkewMs,
      storeTimeoutMs: options.storeTimeoutMs,
      declared: options.allocations,
      autoDefine: options.autoDefine,
      store,
      permits: allocationPermitsOf({
        tryAcquire: (semaphore, decide) => runtime.decide(semaphore, decide),
        amend: (permit, change, decide) => runtime.engine.amend(permit, change, decide),
        release: (permit, notBefore) => runtime.releaseQuietly(permit, notBefore),
        watch: (permit, onLost, watch) => runtime.engine.watch(permit, onLost, watch),
      }, store),
      admin: runtime.admin,
      local: runtime.decisions,
      shuttingDown: (name) => new ShuttingDownError(`Allocation "${name}"`),
      onAssigned: (allocation, resources) => events.emit({ name: 'gatekeeper.resource.assigned', allocation, resources: [...resources] }),
      onRevoked: (allocation, resources, reason) => events.emit({ name: 'gatekeeper.resource.revoked', allocation, resources: [...resources], reason: String(reason) }),
      log: { log: (line) => this.logger.log(line), warn: (line) => this.logger.warn(line), error: (line) => this.logger.error(line) },
    });
    // Parts whose onRevoked overran: their resources stay listed until the permit lapses, so it is never released.
    runtime.keepAtStop(() => this.parts.keptTokens());
  }

  /** Starts every registered part. Called by the module once it is ready. */
  start(): Promise<void> {
    return this.parts.start();
  }

  /** Stops every part gracefully (each waits for its `onRevoked`, bounded by the revoke timeout). */
  drain(): Promise<void> {
    return this.stop();
  }

  /** Stops every part (see {@link drain}); idempotent. */
  stop(): Promise<void> {
    return this.parts.stop();
  }
}
