import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';

/**
 * A method that a decorator of the library marked, found at startup with what the decorator recorded on it. The
 * capability that owns the decorator names its metadata key and the type of what it records (`T`).
 */
export interface DecoratedMethod<T> {
  /** `Class.method`, for messages. */
  readonly where: string;
  /** What the decorator recorded on the method under the key it was found by. */
  readonly metadata: T;
  /** The method as the instance has it (with the decorators' metadata). */
  readonly method: object;
  /** The provider instance the method is called on. */
  readonly instance: object;
}

/**
 * Finds the methods that carry a decorator's metadata among the app's providers and controllers (`@ClusterSingleton`,
 * `@LeaderOnly`, `@ScheduleHandler`, the task decorators), so each capability's startup can check them and take them
 * in. It knows none of those decorators: the capability that reads one asks for its key.
 */
@Injectable()
export class GatekeeperExplorer {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /** All methods of instantiated providers and controllers with metadata under `key`, each with that metadata. */
  discover<T>(key: string): Array<DecoratedMethod<T>> {
    return this.methods().flatMap(({ where, method, instance }) => {
      const metadata = Reflect.getMetadata(key, method) as T | undefined;
      return metadata === undefined ? [] : [{ where, metadata, method, instance }];
    });
  }

  private methods(): Array<{ where: string; method: object; instance: object }> {
    const found: Array<{ where: string; method: object; instance: object }> = [];
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (!prototype) continue;
      for (const key of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[key];
        if (typeof method === 'function') found.push({ where: `${instance.constructor.name}.${key}`, method, instance });
      }
    }
    return found;
  }
}
