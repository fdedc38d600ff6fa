import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import { networkInterfaces } from 'node:os';
import { Server as TlsServer } from 'node:tls';
import { libraryVersion } from '../../core/library-version';
import type { MembershipChanges, Presence } from '../../presence/presence';
import type { PresenceStore } from '../../presence/presence-store';
import { PresenceTracker } from '../../presence/presence.tracker';
import { advertisedHttpAddress, type ListeningAddress } from '../../presence/http-address.rules';
import { GatekeeperError } from '../../core/errors/gatekeeper.error';
import type { CapabilityRuntime } from '../capability.runtime';
import { GATEKEEPER_LOGGER_CONTEXT, GATEKEEPER_OPTIONS, GATEKEEPER_PRESENCE_STORE } from '../gatekeeper.constants';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { moduleRoutePrefix } from '../route-prefix';

/**
 * This instance's presence in the module: announces it, keeps the view of who is here (live app instances, not
 * Hazelcast members), warns of name clashes and tells listeners who joined and left. `ClusterService` serves it
 * to applications.
 * Used inside the module, not by applications.
 */
@Injectable()
export class PresenceRuntime implements CapabilityRuntime {
  private readonly logger = new Logger(GATEKEEPER_LOGGER_CONTEXT);
  private readonly tracker?: PresenceTracker;
  private readonly warnedClashes = new Set<string>();
  private readonly listeners = new Set<(changes: MembershipChanges) => void>();
  private starting?: Promise<void>;
  private retry?: NodeJS.Timeout;
  private stopped = false;
  /** Whether the presence store is connected (so stop() must withdraw and close it). */
  private connected = false;
  /** Stops waiting for the app to listen (its address is then advertised). */
  private unlisten?: () => void;

  constructor(
    @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
    @Optional() @Inject(GATEKEEPER_PRESENCE_STORE) private readonly store?: PresenceStore,
    @Optional() private readonly http?: HttpAdapterHost,
    @Optional() private readonly appConfig?: ApplicationConfig,
    @Optional() private readonly modules?: ModulesContainer,
  ) {
    const membership = options.membership;
    if (!membership || !store) return;
    const { holder } = options;
    this.tracker = new PresenceTracker(
      store,
      {
        instance: holder.instance, acquirer: holder.acquirer, group: holder.group, startedAt: options.clock.now(), version: libraryVersion(),
        ...(membership.httpAddress !== undefined && { httpAddress: membership.httpAddress }),
      },
      options.clock,
      {
        intervalMs: membership.intervalMs,
        ttlMs: membership.ttlMs,
        clockSkewMs: options.clockSkewMs,
        onChange: (changes) => {
          this.warnOfClashes();
          for (const listener of this.listeners) listener(changes);
        },
        onError: (error) => this.logger.debug(`presence: ${(error as Error).message}`),
      },
    );
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
      void this.tracker?.advertise(address).catch((error: unknown) => this.logger.debug(`presence: ${(error as Error).message}`));
    };
    if (host.listening) return advertise();
    const subscription = host.listen$?.subscribe(advertise);
    if (!subscription) return;
    this.unlisten = () => subscription.unsubscribe();
  }

  /** The live app instances, oldest first (the same order on every node). Empty with membership off. */
  participants(): Presence[] {
    return this.tracker?.live() ?? [];
  }

  /**
   * The live instances while the view is confirmed (by the cluster within two intervals), else `undefined`:
   * what warnings and `migrate` may trust to say that nobody can run something.
   */
  confirmedParticipants(): Presence[] | undefined {
    const age = this.viewAgeMs();
    return age !== undefined && age <= 2 * (this.options.membership?.intervalMs ?? 0) ? this.participants() : undefined;
  }

  /** This instance's own entry among {@link participants}, once announced. */
  current(): Presence | undefined {
    return this.participants().find((p) => p.instance === this.options.holder.instance);
  }

  /** Acquirer names more than one live instance uses, with those instances. */
  nameClashes(): Map<string, Presence[]> {
    return this.tracker?.clashes() ?? new Map();
  }

  /** Calls `listener` with who joined and left each time this node's view of the live instances changes; returns the unsubscribe. */
  onChange(listener: (changes: MembershipChanges) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether presence is on. */
  get enabled(): boolean {
    return this.tracker !== undefined;
  }

  /** How long ago the cluster last confirmed this node's presence view (`undefined` before it first did, or with membership off). */
  viewAgeMs(): number | undefined {
    return this.tracker?.ageMs();
  }

  /**
   * Connects presence and announces this instance (called by the module at start-up). A presence that cannot be
   * reached is not fatal: it is logged and tried again every interval. With `membership.refuseDuplicateName` it is:
   * start-up fails unless presence confirmed that no older live instance uses this node's acquirer name.
   */
  start(): Promise<void> {
    this.starting ??= this.connect();
    return this.starting;
  }

  /** Nothing to drain: this instance stays announced while the others drain, and leaves at {@link stop}. */
  async drain(): Promise<void> {}

  /** Withdraws this instance, so others see it leave at once, and disconnects presence (called at shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    clearTimeout(this.retry);
    await this.starting?.catch(() => undefined);
    await this.disconnect();
  }

  private async disconnect(): Promise<void> {
    if (!this.tracker || !this.store || !this.connected) return;
    this.connected = false;
    await this.tracker.stop();
    await this.store.close();
  }

  private async connect(): Promise<void> {
    if (!this.tracker || !this.store || this.stopped) return;
    const refuse = this.options.membership?.refuseDuplicateName === true;
    try {
      await this.store.connect({ corruptValue: (key, reason) => this.logger.warn(`presence: ignoring unreadable entry "${key}" (${reason})`) });
      this.connected = true;
      if (this.stopped) return; // stop() closes it
      await this.tracker.start();
    } catch (error) {
      if (this.connected) await this.store.close().catch(() => undefined);
      this.connected = false;
      if (refuse) throw new GatekeeperError(`Refusing to start: cannot check the acquirer name against live instances (membership.refuseDuplicateName): ${(error as Error).message}`, { cause: error });
      this.logger.warn(`Presence is unavailable, trying again in ${this.options.membership!.intervalMs} ms: ${(error as Error).message}`);
      this.starting = undefined;
      this.retry = setTimeout(() => void this.start().catch(() => undefined), this.options.membership!.intervalMs);
      this.retry.unref();
      return;
    }
    if (refuse) {
      if (this.tracker.ageMs() === undefined) {
        await this.disconnect();
        throw new GatekeeperError('Refusing to start: presence could not read the live instances (membership.refuseDuplicateName)');
      }
      const older = this.olderNamesakes();
      if (older.length > 0) {
        await this.disconnect();
        throw new GatekeeperError(
          `Refusing to start: acquirer name "${this.options.holder.acquirer}" is already used by live instance(s) ` +
            `${older.map((p) => p.instance).join(', ')} (membership.refuseDuplicateName); give this process its own name`,
        );
      }
    }
    this.warnOfClashes();
  }

  private olderNamesakes(): Presence[] {
    const me = this.current();
    const namesakes = this.nameClashes().get(this.options.holder.acquirer) ?? [];
    return namesakes.filter((p) => p.instance !== this.options.holder.instance && (!me || p.startedAt < me.startedAt || (p.startedAt === me.startedAt && p.instance < me.instance)));
  }

  private warnOfClashes(): void {
    const mine = this.nameClashes().get(this.options.holder.acquirer) ?? [];
    for (const other of mine) {
      if (other.instance === this.options.holder.instance || this.warnedClashes.has(other.instance)) continue;
      this.warnedClashes.add(other.instance);
      this.logger.warn(
        `Another live instance (${other.instance}, started ${new Date(other.startedAt).toISOString()}) uses this node's acquirer name ` +
          `"${this.options.holder.acquirer}": permits belong to instances, so both work, but logs and acquirer patterns cannot tell them apart`,
      );
    }
  }
}
