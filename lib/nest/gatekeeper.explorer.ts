import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { CLUSTER_SINGLETON_METADATA, LEADER_ONLY_METADATA, SCHEDULE_HANDLER_METADATA, TASK_HANDLER_METADATA } from './gatekeeper.constants';
import type { TaskHandlerRegistration } from './tasks/task-handler.decorator';
import type { ResolvedClusterSingletonOptions } from './schedules/cluster-singleton.options';

/** A method decorated with `@ClusterSingleton`, found at startup. */
export interface ClusterSingletonJob {
  /** `Class.method`, for messages. */
  readonly where: string;
  /** The decorator's options. */
  readonly options: ResolvedClusterSingletonOptions;
  /** The decorated method (with the schedule decorators' metadata). */
  readonly method: object;
  /** The provider instance the method is called on. */
  readonly instance: object;
}

/** A method decorated with `@LeaderOnly`, found at startup. */
export interface LeaderOnlyMethod {
  /** `Class.method`, for messages. */
  readonly where: string;
  /** The election it runs on the leader of. */
  readonly election: string;
}

/** A method with a task decorator (`@TaskHandler`, `@GroupFinishedHandler`, `@InvalidTaskHandler`, `@OncePerTrigger`). */
export interface TaskHandlerMethod {
  /** `Class.method`, for messages. */
  readonly where: string;
  readonly registration: TaskHandlerRegistration;
  /** The provider instance the method is called on. */
  readonly instance: object;
  /** The method as the instance has it (with the decorators' metadata). */
  readonly method: object;
}

/** A method decorated with `@ScheduleHandler`, found at startup. */
export interface ScheduleHandlerMethod {
  /** `Class.method`, for messages. */
  readonly where: string;
  /** The handler name schedules refer to. */
  readonly name: string;
  readonly instance: object;
  readonly method: object;
}

/**
 * Finds every `@ClusterSingleton`, `@LeaderOnly` and task decorator method among the app's providers and controllers, so startup
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
    return this.methods().flatMap(({ where, method, instance }) => {
      const options = Reflect.getMetadata(CLUSTER_SINGLETON_METADATA, method) as ResolvedClusterSingletonOptions | undefined;
      return options ? [{ where, options, method, instance }] : [];
    });
  }

  /** All `@LeaderOnly` methods of instantiated providers and controllers. */
  discoverLeaderOnly(): LeaderOnlyMethod[] {
    return this.methods().flatMap(({ where, method }) => {
      const election = Reflect.getMetadata(LEADER_ONLY_METADATA, method) as string | undefined;
      return election === undefined ? [] : [{ where, election }];
    });
  }

  /** All methods with a task decorator, of instantiated providers and controllers. */
  discoverTaskHandlers(): TaskHandlerMethod[] {
    return this.methods().flatMap(({ where, method, instance }) => {
      const registration = Reflect.getMetadata(TASK_HANDLER_METADATA, method) as TaskHandlerRegistration | undefined;
      return registration ? [{ where, registration, instance, method }] : [];
    });
  }

  /** All `@ScheduleHandler` methods of instantiated providers and controllers. */
  discoverScheduleHandlers(): ScheduleHandlerMethod[] {
    return this.methods().flatMap(({ where, method, instance }) => {
      const name = Reflect.getMetadata(SCHEDULE_HANDLER_METADATA, method) as string | undefined;
      return name === undefined ? [] : [{ where, name, instance, method }];
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
