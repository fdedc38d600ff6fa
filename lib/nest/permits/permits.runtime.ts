import { Inject, Injectable, Logger } from '@nestjs/common';
import type { PermitStore } from '../../permits/permit-store';
import { PermitsProcess } from '../../permits/permits.process';
import type { CapabilityRuntime } from '../capability.runtime';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_STORE } from '../gatekeeper.constants';
import { permitsBackendKind } from '../options/backend-choice.options';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { PresenceRuntime } from '../presence/presence.runtime';
import { GatekeeperTracing } from '../signals/gatekeeper-tracing';
import { OutageNotice } from '../signals/outage-notice';
import { PermitsStartup } from './permits.startup';

/**
 * The permits capability in one process ({@link PermitsProcess}: engine, edits, executor, phase, start and shutdown)
 * as the module's provider, wired to its options, store, presence, tracing and log. Used inside the module, not by
 * applications.
 */
@Injectable()
export class PermitsRuntime extends PermitsProcess implements CapabilityRuntime {
  constructor(
    @Inject(GATEKEEPER_OPTIONS) options: ResolvedGatekeeperOptions,
    @Inject(GATEKEEPER_STORE) store: PermitStore,
    startup: PermitsStartup,
    presence: PresenceRuntime,
    tracing: GatekeeperTracing,
  ) {
    super(options, store, startup, {
      liveInstances: () => presence.confirmedParticipants(),
      tracer: tracing,
      log: new Logger(GATEKEEPER_LOGGER_CONTEXT),
      backend: permitsBackendKind(options),
      isOutage: (error) => OutageNotice.isOutage(error),
    });
  }
}
