import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { CLUSTER_SINGLETON_METADATA } from './gatekeeper.constants';
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

/** Finds every `@ClusterSingleton` method among the app's providers and controllers, so startup can check them. */
@Injectable()
export class ClusterSingletonExplorer {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /** All decorated methods of instantiated providers and controllers. */
  discover(): ClusterSingletonJob[] {
    const jobs: ClusterSingletonJob[] = [];
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      for (const key of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[key];
        if (typeof method !== 'function') continue;
        const options = Reflect.getMetadata(CLUSTER_SINGLETON_METADATA, method) as ResolvedClusterSingletonOptions | undefined;
        if (options) jobs.push({ where: `${instance.constructor.name}.${key}`, options, method });
      }
    }
    return jobs;
  }
}
