import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { systemClock } from '../../core/clock';
import { validateDefinition } from '../../permits/definition.validator';
import { parseOptionDuration } from '../../core/duration';
import type { NodeIdentity } from '../../permits/permit';
import type { SemaphoreDefinition } from '../../permits/semaphore-definition';
import { InvalidDefinitionError } from '../../core/errors/invalid-definition.error';
import { InvalidOptionsError } from '../../core/errors/invalid-options.error';
import { HTTP_ADDRESS_FORMAT, httpAddressProblem } from '../../presence/http-address.rules';
import type { HazelcastStoreOptions } from '../../backends/hazelcast/permits/hazelcast-permit.store';
import { electionDefinition, electionSemaphore, type ElectionInput } from '../../elections/election';
import { resolveAllocations } from '../../allocation/allocation-definition';
import { resolveTasksOptions } from './tasks.options';
import { resolveSchedulesOptions } from './schedules.options';
import { resolveMetricsOptions } from './metrics.options';
import { nearCacheOnLibraryMap } from '../../backends/hazelcast/library-maps';
import { resolveAdminOptions } from './gatekeeper-admin.options';
import { resolveBackends } from './backend-choice.options';
import type { PostgresBackendOptions } from '../../backends/postgres/postgres-backend.options';
import type { RedisBackendOptions } from '../../backends/redis/redis-backend.options';
import type { GatekeeperModuleOptions, MembershipOptions, ResolvedGatekeeperOptions } from './gatekeeper.options';

/**
 * Module options to resolved options: defaults merged, every field validated once at boot, and an error that names
 * the option's path. The option types themselves are in `gatekeeper.options.ts`.
 */
/** Merges defaults and validates, once, at boot. Throws {@link InvalidOptionsError} naming the option's path (`admin.token`, `definitions[2].duration`). */
export function resolveGatekeeperOptions(options: GatekeeperModuleOptions = {}): ResolvedGatekeeperOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionsError('options', `must be an object, got ${String(options)}`);
  }
  rejectUnknownKeys(options as Record<string, unknown>, OPTION_KEYS, '');
  if (options.identity !== undefined) rejectUnknownKeys(options.identity as Record<string, unknown>, IDENTITY_KEYS, 'identity.');
  if (options.hazelcast !== undefined) rejectUnknownKeys(options.hazelcast as Record<string, unknown>, HAZELCAST_KEYS, 'hazelcast.');
  if (options.tracing !== undefined && typeof options.tracing !== 'boolean') {
    throw new InvalidOptionsError('tracing', `must be true or false, got ${JSON.stringify(options.tracing)}`);
  }
  if (options.connectInBackground !== undefined && typeof options.connectInBackground !== 'boolean') {
    throw new InvalidOptionsError('connectInBackground', `must be true or false, got ${JSON.stringify(options.connectInBackground)}`);
  }
  const identity = {
    group: options.identity?.group ?? 'default',
    acquirer: options.identity?.acquirer ?? `${hostname()}-${process.pid}`,
  };
  for (const field of ['group', 'acquirer'] as const) {
    if (typeof identity[field] !== 'string' || identity[field].trim() === '') {
      throw new InvalidOptionsError(`identity.${field}`, `must be a non-empty string, got ${JSON.stringify(identity[field])}`);
    }
  }
  const elections = resolveElections(options.elections);
  const allocations = resolveAllocations(options.allocations);
  const definitions = [
    ...resolveDefinitions(options.definitions),
    ...elections.values(),
    ...[...allocations.values()].filter((a) => !a.manual).map((a) => a.definition),
  ];
  const seen = new Set<string>();
  definitions.forEach(({ name }, i) => {
    if (seen.has(name)) throw new InvalidOptionsError(i < (options.definitions?.length ?? 0) ? `definitions[${i}].name` : 'definitions', `"${name}" is defined twice in the module options`, name);
    seen.add(name);
  });
  const policy = options.definitionsPolicy ?? 'keep';
  if (policy !== 'keep' && policy !== 'overwrite') {
    throw new InvalidOptionsError('definitionsPolicy', `must be 'keep' or 'overwrite', got '${String(policy)}'`);
  }
  const store = options.store;
  if (store !== undefined && store !== 'hazelcast' && store !== 'memory' && (store === null || typeof store !== 'object')) {
    throw new InvalidOptionsError('store', `must be 'hazelcast', 'memory' or a PermitStore, got ${JSON.stringify(store)}`);
  }
  return {
    // Ownership: unique per instance, so a restarted process (pid 1 again, in a container) or a second process
    // with the same name never adopts another's permit and fencing token.
    holder: { ...identity, instance: `${identity.acquirer}/${randomUUID()}` },
    definitions,
    elections,
    allocations,
    definitionsPolicy: policy,
    autoDefine: options.autoDefine ?? true,
    backends: resolveBackends(options),
    ...(typeof store === 'object' && { permitStore: store }),
    hazelcast: resolveHazelcast(options.hazelcast),
    postgres: resolvePostgres(options.postgres),
    redis: resolveRedis(options.redis),
    connectTimeoutMs: parseOptionDuration(options.connectTimeout ?? '30s', 'connectTimeout'),
    connectInBackground: options.connectInBackground ?? false,
    shutdownTimeoutMs: parseOptionDuration(options.shutdownTimeout ?? '10s', 'shutdownTimeout', { allowZero: true }),
    stateDumpIntervalMs:
      options.stateDumpInterval === undefined
        ? undefined
        : parseOptionDuration(options.stateDumpInterval, 'stateDumpInterval'),
    clockSkewMs: parseOptionDuration(options.maxClockSkew ?? '500ms', 'maxClockSkew', { allowZero: true }),
    quorum: resolveQuorum(options.quorum),
    storeTimeoutMs: parseOptionDuration(options.storeTimeout ?? '5s', 'storeTimeout'),
    clock: options.clock ?? systemClock,
    membership: resolveMembership(options.membership),
    tasks: resolveTasksOptions(options.tasks),
    schedules: resolveSchedulesOptions(options.schedules),
    metrics: resolveMetricsOptions(options.metrics),
    tracing: options.tracing ?? true,
    admin: resolveAdminOptions(options.admin),
  };
}

function resolveMembership(membership: GatekeeperModuleOptions['membership']): ResolvedGatekeeperOptions['membership'] {
  if (membership === false) return undefined;
  const given = membership ?? {};
  if (given === null || typeof given !== 'object') throw new InvalidOptionsError('membership', `must be false or an object, got ${String(given)}`);
  rejectUnknownKeys(given as Record<string, unknown>, MEMBERSHIP_KEYS, 'membership.');
  const intervalMs = parseOptionDuration(given.interval ?? '5s', 'membership.interval');
  const ttlMs = given.ttl === undefined ? 3 * intervalMs : parseOptionDuration(given.ttl, 'membership.ttl');
  if (ttlMs <= intervalMs) throw new InvalidOptionsError('membership.ttl', `must be more than membership.interval (${intervalMs} ms), got ${ttlMs} ms`);
  if (given.httpAddress !== undefined) {
    const problem = typeof given.httpAddress !== 'string' || given.httpAddress.trim() === '' ? 'is not a non-empty string' : httpAddressProblem(given.httpAddress);
    if (problem !== undefined) {
      throw new InvalidOptionsError('membership.httpAddress', `must be where this node's HTTP server answers, ${HTTP_ADDRESS_FORMAT}; ${JSON.stringify(given.httpAddress)} ${problem}`);
    }
  }
  return {
    intervalMs,
    ttlMs,
    ...(given.httpAddress !== undefined && { httpAddress: given.httpAddress.trim() }),
    refuseDuplicateName: given.refuseDuplicateName === true,
    ...(given.store !== undefined && { store: given.store }),
  };
}

/** The `definitions` option, validated; an error names the entry's path (`definitions[2].duration`) and its semaphore. */
function resolveDefinitions(definitions: GatekeeperModuleOptions['definitions']): SemaphoreDefinition[] {
  if (definitions === undefined) return [];
  if (!Array.isArray(definitions)) throw new InvalidOptionsError('definitions', `must be an array of { name, permits, duration, groupPattern, acquirerPattern }, got ${JSON.stringify(definitions)}`);
  return definitions.map((input, i) => {
    try {
      return validateDefinition(input);
    } catch (error) {
      if (!(error instanceof InvalidDefinitionError)) throw error;
      const named = error.semaphore !== undefined && !error.semaphore.startsWith('<') ? error.semaphore : undefined;
      throw new InvalidOptionsError(`definitions[${i}].${error.field}`, named ? `(semaphore "${named}") ${error.reason}` : error.reason, named);
    }
  });
}

/** The `elections` option, validated into one-permit definitions keyed by election name. */
function resolveElections(elections: GatekeeperModuleOptions['elections']): Map<string, SemaphoreDefinition> {
  if (elections === undefined) return new Map();
  if (!Array.isArray(elections)) throw new InvalidOptionsError('elections', `must be an array of names or { name, lease, groupPattern, acquirerPattern }, got ${JSON.stringify(elections)}`);
  const resolved = new Map<string, SemaphoreDefinition>();
  elections.forEach((given, i) => {
    const input: ElectionInput = typeof given === 'string' ? { name: given } : given;
    if (input === null || typeof input !== 'object') throw new InvalidOptionsError(`elections[${i}]`, `must be a name or an object, got ${JSON.stringify(given)}`);
    rejectUnknownKeys(input as unknown as Record<string, unknown>, ELECTION_KEYS, `elections[${i}].`);
    if (typeof input.name !== 'string' || input.name.trim() === '') {
      throw new InvalidOptionsError(`elections[${i}].name`, `must be a non-empty string, got ${JSON.stringify(input.name)}`);
    }
    if (resolved.has(input.name)) throw new InvalidOptionsError(`elections[${i}].name`, `"${input.name}" is declared twice`);
    try {
      resolved.set(input.name, electionDefinition(input));
    } catch (error) {
      if (!(error instanceof InvalidDefinitionError)) throw error;
      throw new InvalidOptionsError(`elections[${i}].${error.field === 'duration' ? 'lease' : error.field}`, `(election "${input.name}") ${error.reason}`, electionSemaphore(input.name));
    }
  });
  return resolved;
}

/**
 * The `hazelcast` option: the client config passes through whole (TLS, credentials, cloud discovery, routing, ...),
 * but no near cache may cover the library's maps: a near cache answers reads from a local copy that an invalidation
 * may reach late, and a permit decided on a stale copy could be granted twice.
 */
function resolveHazelcast(hazelcast: GatekeeperModuleOptions['hazelcast']): ResolvedGatekeeperOptions['hazelcast'] {
  if (hazelcast === undefined) return {};
  const { client, clientConfig, mapPrefix } = hazelcast;
  if (mapPrefix !== undefined && (typeof mapPrefix !== 'string' || mapPrefix.trim() === '')) {
    throw new InvalidOptionsError('hazelcast.mapPrefix', `must be a non-empty string, got ${JSON.stringify(mapPrefix)}`);
  }
  if (clientConfig !== undefined && (clientConfig === null || typeof clientConfig !== 'object' || Array.isArray(clientConfig))) {
    throw new InvalidOptionsError('hazelcast.clientConfig', `must be a hazelcast-client ClientConfig object, got ${JSON.stringify(clientConfig)}`);
  }
  const sources: Array<[string, object | undefined]> = [['hazelcast.clientConfig.nearCaches', clientConfig?.nearCaches]];
  if (client) sources.push(['hazelcast.client', safeNearCaches(client)]);
  for (const [path, nearCaches] of sources) {
    const hit = nearCaches && nearCacheOnLibraryMap(Object.keys(nearCaches), mapPrefix);
    if (!hit) continue;
    throw new InvalidOptionsError(
      path === 'hazelcast.client' ? 'hazelcast.client' : `${path}[${JSON.stringify(hit.pattern)}]`,
      `${path === 'hazelcast.client' ? `its config has a near cache "${hit.pattern}"` : 'this near cache'} would cover the library's map "${hit.map}": ` +
        'a near cache serves reads from a local copy that may be stale, and permits decided on stale reads could be granted twice. ' +
        'Name the maps of your own near caches (or a pattern that leaves out the library\'s maps) instead',
    );
  }
  return hazelcast;
}

/** An injected client's near-cache configs (`getConfig()` is the client's public API; anything else has none). */
function safeNearCaches(client: object): object | undefined {
  const config = (client as { getConfig?: () => { nearCaches?: object } }).getConfig?.();
  return config?.nearCaches;
}

function resolveQuorum(quorum: number | undefined): number | undefined {
  if (quorum === undefined) return undefined;
  if (!Number.isSafeInteger(quorum) || quorum < 1) {
    throw new InvalidOptionsError('quorum', `must be a whole number, 1 or more, got ${JSON.stringify(quorum)}`);
  }
  return quorum;
}

/** Every option `GatekeeperModuleOptions` has: a factory's result is checked at run time, as `forRoot`'s type is at compile time. */
const OPTION_KEYS: ReadonlyArray<keyof GatekeeperModuleOptions> = [
  'identity', 'definitions', 'definitionsPolicy', 'autoDefine', 'backend', 'backends', 'store', 'hazelcast', 'postgres', 'redis', 'connectTimeout',
  'connectInBackground', 'shutdownTimeout', 'maxClockSkew', 'quorum', 'stateDumpInterval', 'storeTimeout', 'clock', 'membership', 'elections',
  'allocations', 'tasks', 'schedules', 'metrics', 'tracing', 'admin',
];
const ELECTION_KEYS: ReadonlyArray<keyof ElectionInput> = ['name', 'lease', 'groupPattern', 'acquirerPattern'];
const MEMBERSHIP_KEYS: ReadonlyArray<keyof MembershipOptions> = ['interval', 'ttl', 'httpAddress', 'refuseDuplicateName', 'store'];
const IDENTITY_KEYS: ReadonlyArray<keyof NodeIdentity> = ['group', 'acquirer'];
const HAZELCAST_KEYS: ReadonlyArray<keyof HazelcastStoreOptions> = ['client', 'clientConfig', 'mapPrefix', 'callTimeoutMs'];
/** Options of `forRoot` / `forRootAsync` themselves, which a factory cannot return. */
const EXTRAS = new Set(['isGlobal']);

function rejectUnknownKeys(value: Record<string, unknown>, known: readonly string[], prefix: string): void {
  if (value === null || typeof value !== 'object') {
    throw new InvalidOptionsError(prefix.slice(0, -1), `must be an object, got ${String(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const hint = prefix === '' && EXTRAS.has(key)
      ? `is an option of forRoot/forRootAsync itself: pass it next to useFactory, not in the factory's result`
      : `is not an option (expected one of ${known.join(', ')})`;
    throw new InvalidOptionsError(`${prefix}${key}`, hint);
  }
}

/** The `redis` options: an object, checked by the backend when it is made (see `createBackends`). */
function resolveRedis(redis: unknown): RedisBackendOptions {
  if (redis === undefined) return {};
  if (redis === null || typeof redis !== 'object' || Array.isArray(redis)) {
    throw new InvalidOptionsError('redis', `must be an object (client, url or connection, mapPrefix), got ${JSON.stringify(redis)}`);
  }
  return redis as RedisBackendOptions;
}

/** The `postgres` options: an object, checked by the backend when it is made (see `createBackends`). */
function resolvePostgres(postgres: unknown): PostgresBackendOptions {
  if (postgres === undefined) return {};
  if (postgres === null || typeof postgres !== 'object' || Array.isArray(postgres)) {
    throw new InvalidOptionsError('postgres', `must be an object (pool, connectionString or poolConfig, schema, mapPrefix), got ${JSON.stringify(postgres)}`);
  }
  return postgres as PostgresBackendOptions;
}
