import { z } from 'zod';
import { CAPABILITY_STATES, type CapabilityState } from '../../core/capability-state';
import { withReason } from '../../core/input-schema';
import { isStoreBackend, STORE_BACKEND_METHODS, type StoreBackend } from '../../store/store-backend';
import { optionKeys, parseOption } from './option-schema';

/**
 * A backend of the store contract: `'hazelcast'` (the module's own Hazelcast connection, configured by the
 * `hazelcast` option), `'memory'` (this process's memory: one instance, local development, tests), `'postgres'` and
 * `'redis'` (configured by the `postgres` and `redis` options), or a
 * {@link StoreBackend} you built (a backend of your own, or one of the library's on a client you already have).
 */
export type BackendChoice = 'hazelcast' | 'memory' | 'postgres' | 'redis' | StoreBackend;

/** The backends a {@link BackendChoice} names: every one the `backend` and `backends` options take by name. */
export const BACKEND_NAMES = ['hazelcast', 'memory', 'postgres', 'redis'] as const satisfies ReadonlyArray<Extract<BackendChoice, string>>;


/**
 * A backend per capability, over the module's `backend`: for example permits on Hazelcast for the fastest decisions
 * and the run history and runtime schedules on a durable store, so they survive a full restart.
 */
export interface CapabilityBackends {
  /** Semaphores and their permits: cron singletons, manual permits, and the elections and allocations built on them. */
  permits?: BackendChoice;
  /** Who is here (membership, the cluster status). */
  presence?: BackendChoice;
  /** Runtime schedules and run-now requests. */
  schedules?: BackendChoice;
  /** The jobs' run history. */
  history?: BackendChoice;
  /** Leased tasks and their groups. */
  tasks?: BackendChoice;
}

/** The backend of every capability, resolved. */
export type ResolvedBackends = Readonly<Record<CapabilityState, BackendChoice>>;

/** What the backend options are read from. */
export interface BackendOptionsInput {
  backend?: unknown;
  backends?: unknown;
}

/** A backend by name or a {@link StoreBackend}; anything else is named with what a backend has. */
const BACKEND_CHOICE: z.ZodType<BackendChoice> = withReason(
  z.union([z.enum(BACKEND_NAMES), z.custom<StoreBackend>(isStoreBackend)]),
  (given) => `must be ${BACKEND_NAMES.map((name) => `'${name}'`).join(', ')} or a StoreBackend (with ${STORE_BACKEND_METHODS.join(', ')}), got ${describeValue(given)}`,
);

/** The `backends` option's keys (each capability's choice is read by resolveBackends). */
export const CAPABILITY_BACKENDS = optionKeys(CAPABILITY_STATES, {
  notObject: (given) => `must be an object with any of ${CAPABILITY_STATES.join(', ')}, got ${JSON.stringify(given)}`,
  unknownKey: () => `is not a capability with a backend of its own (known: ${CAPABILITY_STATES.join(', ')})`,
});

/** The module's `backend` and `backends` options to one backend per capability. */
export function resolveBackends(options: BackendOptionsInput): ResolvedBackends {
  const fallback = parseOption(BACKEND_CHOICE.optional(), options.backend, 'backend') ?? 'hazelcast';
  const each: Partial<Record<CapabilityState, unknown>> = parseOption(CAPABILITY_BACKENDS.optional(), options.backends, 'backends') ?? {};
  const resolved = {} as Record<CapabilityState, BackendChoice>;
  for (const state of CAPABILITY_STATES) {
    resolved[state] = parseOption(BACKEND_CHOICE.optional(), each[state], `backends.${state}`) ?? fallback;
  }
  return resolved;
}

/** Whether any capability is on the module's own Hazelcast connection. */
export function usesHazelcast(backends: ResolvedBackends): boolean {
  return CAPABILITY_STATES.some((state) => backends[state] === 'hazelcast');
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (value !== null && typeof value === 'object') return `an object without them (${Object.keys(value).slice(0, 5).join(', ') || 'no keys'})`;
  return String(value);
}

/**
 * The kind of the permits' backend (`'hazelcast'`, `'postgres'`, `'redis'`, `'memory'`, a backend of the user's own
 * kind): what the lines about the permits' store name.
 */
export function permitsBackendKind(options: { readonly backends: ResolvedBackends }): string {
  const choice = options.backends.permits;
  return typeof choice === 'object' ? choice.kind : choice;
}
