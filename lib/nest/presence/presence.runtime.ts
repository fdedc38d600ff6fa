import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import { networkInterfaces } from 'node:os';
import { Server as TlsServer } from 'node:tls';
import { libraryVersion } from '../../core/library-version';
import { Membership } from '../../presence/membership';
import type { MembershipChanges, Presence } from '../../presence/presence';
import type { PresenceStore } from '../../presence/presence-store';
import type { PresenceTracker } from '../../presence/presence.tracker';
import { advertisedHttpAddress, type ListeningAddress } from '../../presence/http-address.rules';
import type { CapabilityRuntime } from '../capability.runtime';
import { GATEKEEPER_BACKENDS, GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_PRESENCE_STORE } from '../gatekeeper.constants';
import type { ModuleBackends } from '../gatekeeper-stores.factory';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { moduleRoutePrefix } from '../route-prefix';

/**
 * This instance's presence in the module: its {@link Membership} (announced, the view of who is here: live app
 * instances, not Hazelcast members; name clashes warned of) when membership is on, the address it advertises once
 * the app listens, and the listeners told who joined and left. `ClusterService` serves it to applications.
 * Used inside the module, not by applications.
 */
@Injectable()
export class PresenceRuntime implements CapabilityRuntime {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly membership?: Membership;
  private readonly listeners = new Set<(changes: MembershipChanges) => void>();
  /** Stops waiting for the app to listen (its address is then advertised). */
  private unlisten?: () => void;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Optional() @Inject(GATEKEEPER_PRESENCE_STORE) store?: PresenceStore,
    @Optional() private readonly http?: HttpAdapterHost,
    @Optional() private readonly appConfig?: ApplicationConfig,
    @Optional() private readonly modules?: ModulesContainer,
    @Optional() @Inject(GATEKEEPER_BACKENDS) backends?: ModuleBackends,
  ) {
    const membership = options.membership;
    if (!membership || !store) return;
    const { holder } = options;
    const self = {
      instance: holder.instance, acquirer: holder.acquirer, group: holder.group, startedAt: options.clock.now(), version: libraryVersion(),
      ...(membership.httpAddress !== undefined && { httpAddress: membership.httpAddress }),
      // Where each capability keeps its state: the CLI sends each command to the store that holds it.
      ...(backends !== undefined && { stores: backends.layout }),
    };
    this.membership = new Membership(store, self, options.clock, {
      intervalMs: membership.intervalMs,
      ttlMs: membership.ttlMs,
      clockSkewMs: options.clockSkewMs,
      refuseDuplicateName: membership.refuseDuplicateName === true,
      onChange: (changes) => {
        for (const listener of this.listeners) listener(changes);
      },
      log: { warn: (message) => this.logger.warn(message), debug: (message) => this.logger.debug(message) },
    });
    if (membership.httpAddress === undefined) this.advertiseOnListen();
  }

  /**
   * Without `membership.httpAddress`: once the app listens (`app.listen()`), advertises the address its HTTP server
   * took, under the app's global prefix and the module's `RouterModule` path, so the CLI's `jobs describe` and
   * `jobs run` find this node with no configuration. An app that never listens (an application context, a
   * microservice) advertises none.
   */
  private advertiseOnListen(): void {
    const host = this.http;
    if (!host) return;
    const advertise = () => {
      const server = host.httpAdapter?.getHttpServer() as { address?: () => ListeningAddress } | undefined;
      const listening = advertisedHttpAddress(server?.address?.() ?? null, server instanceof TlsServer, networkInterfaces());
      if (listening === undefined) return;
      // The module's routes (the admin API's) sit under the app's global prefix and a RouterModule path, if any.
      const prefix = moduleRoutePrefix(this.appConfig, this.modules, PresenceRuntime);
      const address = prefix === '' ? listening : `${listening}/${prefix}`;
      this.logger.debug(`presence: advertising ${address}, where this node's HTTP server listens (membership.httpAddress sets another)`);
      void this.membership?.advertise(address).catch((error: unknown) => this.logger.debug(`presence: ${(error as Error).message}`));
    };
    if (host.listening) return advertise();
    const subscription = host.listen$?.subscribe(advertise);
    if (!subscription) return;
    this.unlisten = () => subscription.unsubscribe();
  }

  /** The live app instances, oldest first (the same order on every node). Empty with membership off. */
  participants(): Presence[] {
    return this.membership?.participants() ?? [];
  }

  /**
   * The live instances while the view is confirmed (by the cluster within two intervals), else `undefined`:
   * what warnings and `migrate` may trust to say that nobody can run something.
   */
  confirmedParticipants(): Presence[] | undefined {
    return this.membership?.confirmedParticipants();
  }

  /** The view of who is here, to read directly (`confirmed()`), when membership is on. */
  get view(): Pick<PresenceTracker, 'confirmed'> | undefined {
    return this.membership?.tracker;
  }

  /** This instance's own entry among {@link participants}, once announced. */
  current(): Presence | undefined {
    return this.membership?.current();
  }

  /** Acquirer names more than one live instance uses, with those instances. */
  nameClashes(): Map<string, Presence[]> {
    return this.membership?.nameClashes() ?? new Map();
  }

  /** Calls `listener` with who joined and left each time this node's view of the live instances changes; returns the unsubscribe. */
  onChange(listener: (changes: MembershipChanges) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether presence is on. */
  get enabled(): boolean {
    return this.membership !== undefined;
  }

  /** How long ago the cluster last confirmed this node's presence view (`undefined` before it first did, or with membership off). */
  viewAgeMs(): number | undefined {
    return this.membership?.viewAgeMs();
  }

  /**
   * Connects presence and announces this instance (called by the module at start-up). A presence that cannot be
   * reached is not fatal: it is logged and tried again every interval. With `membership.refuseDuplicateName` it is:
   * start-up fails unless presence confirmed that no older live instance uses this node's acquirer name.
   */
  async start(): Promise<void> {
    await this.membership?.start();
  }

  /** Nothing to drain: this instance stays announced while the others drain, and leaves at {@link stop}. */
  async drain(): Promise<void> {}

  /** Withdraws this instance, so others see it leave at once, and disconnects presence (called at shutdown). */
  async stop(): Promise<void> {
    this.unlisten?.();
    await this.membership?.stop();
  }
}
