import { createRequire } from 'node:module';
import type * as Hazelcast from 'hazelcast-client';
import { invalidOption } from '../../core/errors/input.errors';

/*
 * hazelcast-client's values (its classes, enums and factories), loaded at their first use rather than when this folder
 * is imported: the root entry exports the Hazelcast backend, and an application on PostgreSQL or Redis alone loads it
 * without `hazelcast-client` installed (an optional peer, as `pg` and `ioredis` are). The files of this folder import
 * the client's values from here and its types from the client itself.
 */

let client: typeof Hazelcast | undefined;

/** `hazelcast-client`, required once: a clear error (an `InvalidInputError`) when it is not installed. */
export function hazelcast(): typeof Hazelcast {
  if (client) return client;
  try {
    return (client = createRequire(__filename)('hazelcast-client') as typeof Hazelcast);
  } catch (error) {
    throw invalidOption('hazelcast', `the Hazelcast backend needs the hazelcast-client package (npm install hazelcast-client): ${(error as Error).message}`);
  }
}

/** A stand-in for the client's export `name` that loads the client when first used (read, called, constructed, tested by instanceof). */
function lazy<K extends keyof typeof Hazelcast>(name: K): (typeof Hazelcast)[K] {
  const real = () => hazelcast()[name] as object;
  // A function target, so the stand-in can be constructed and called like the class it stands for.
  return new Proxy(function standIn() {}, {
    // Its functions (a class's statics, a namespace's factories) called on the client's own object, as if imported.
    get: (_target, key) => {
      const value = Reflect.get(real(), key) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(real()) : value;
    },
    has: (_target, key) => Reflect.has(real(), key),
    construct: (_target, args) => Reflect.construct(real() as new (...a: unknown[]) => object, args),
    apply: (_target, self, args) => Reflect.apply(real() as (...a: unknown[]) => unknown, self, args),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  }) as unknown as (typeof Hazelcast)[K];
}

export const Client = lazy('Client');
export type Client = Hazelcast.Client;
export const HazelcastJsonValue = lazy('HazelcastJsonValue');
export type HazelcastJsonValue = Hazelcast.HazelcastJsonValue;
export const LifecycleState = lazy('LifecycleState');
export type LifecycleState = Hazelcast.LifecycleState;
export const SplitBrainProtectionError = lazy('SplitBrainProtectionError');
export type SplitBrainProtectionError = Hazelcast.SplitBrainProtectionError;
export const Predicates = lazy('Predicates');
export const Aggregators = lazy('Aggregators');
