import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { CLUSTER_SINGLETON_METADATA, LEADER_ONLY_METADATA } from './gatekeeper.constants';
import type { ResolvedClusterSingletonOptions } from './cluster-singleton.options';

/** A method decorated with `@ClusterSingleton`, found at startup. */
export interface ClusterSingletonJob {
  /** `Class.method`, for messages. */
  readonly where: string;
  /** The decorator's options. */
  readonly options: ResolvedClusterSingletonOptions;
  /** The decorated method (with the schedule decorators' metadata). */
  readonly method: object;
}

/** A method decorated with `@LeaderOnly`, found at startup. */
export interface LeaderOnlyMethod {
  /** `Class.method`, for messages. */
  readonly where: string;
  /** The election it runs on the leader of. */
  readonly election: string;
}

/**
 * Finds every `@ClusterSingleton` and `@LeaderOnly` method among the app's providers and controllers, so startup
 * can check them and join their elections.
 */
@Injectable()
export class GatekeeperExplorer {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /** All `@ClusterSingleton` methods of instantiated providers and controllers. */
  discover(): ClusterSingletonJob[] {
    return this.methods().flatMap(({ where, method }) => {
      const options = Reflect.getMetadata(CLUSTER_SINGLETON_METADATA, method) as ResolvedClusterSingletonOptions | undefined;
      return options ? [{ where, options, method }] : [];
    });
  }

  /** All `@LeaderOnly` methods of instantiated providers and controllers. */
  discoverLeaderOnly(): LeaderOnlyMethod[] {
    return this.methods().flatMap(({ where, method }) => {
      const election = Reflect.getMetadata(LEADER_ONLY_METADATA, method) as string | undefined;
      return election === undefined ? [] : [{ where, election }];
    });
  }

  private methods(): Array<{ where: string; method: object }> {
    const found: Array<{ where: string; method: object }> = [];
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      for (const key of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[key];
        if (typeof method === 'function') found.push({ where: `${instance.constructor.name}.${key}`, method });
      }
    }
    return found;
  }
}
