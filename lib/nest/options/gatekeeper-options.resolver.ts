import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { systemClock } from '../../core/clock';
import { StoreClock } from '../../store/store-clock';
import { absentAs, durationInput } from '../../core/input-fields';
import { MAX_NODE_NAME_LENGTH, nameInput } from '../../core/names';
import { DEFINITION, validateDefinition } from '../../permits/definition.validator';
import type { NodeIdentity } from '../../permits/permit';
import type { SemaphoreDefinition, SemaphoreDefinitionInput } from '../../permits/semaphore-definition';
import { ALLOCATION_KEYS, resolveAllocations } from '../../allocation/allocation-definition';
import type { PostgresBackendOptions } from '../../backends/postgres/postgres-backend.options';
import type { RedisBackendOptions } from '../../backends/redis/redis-backend.options';
import { CAPABILITY_BACKENDS, resolveBackends } from './backend-choice.options';
import { ELECTION, resolveElections } from './elections.options';
import { ADMIN_OPTIONS, resolveAdminOptions } from './gatekeeper-admin.options';
import { checkHazelcastKeys, HAZELCAST_OPTION_KEYS, resolveHazelcast } from './hazelcast.options';
import { MEMBERSHIP_OPTIONS, resolveMembership } from './membership.options';
import { METRICS_OPTIONS, resolveMetricsOptions } from './metrics.options';
import { passThroughObject, trueOrFalseOption, wholeNumberOption } from './option-fields';
import { notAnOption, optionKeys, parseOption } from './option-schema';
import { resolveSchedulesOptions, SCHEDULES_OPTIONS } from './schedules.options';
import { resolveTasksOptions, TASKS_OPTIONS } from './tasks.options';
import type { GatekeeperModuleOptions, ResolvedGatekeeperOptions } from './gatekeeper.options';
import { invalidOption } from '../../core/errors/input.errors';
import { InvalidInputError } from '../../core/errors/invalid-input.error';

/*
 * Module options to resolved options: defaults merged, every field validated once at boot, and an error that names
 * the option's path. The option types themselves are in `gatekeeper.options.ts`.
 */

/** A node's group or acquirer: a name (lib/core/names), in permits, patterns and logs. */
const NODE_NAME = nameInput({ max: MAX_NODE_NAME_LENGTH });

/** Merges defaults and validates, once, at boot. Throws {@link InvalidInputError} naming the option's path (`admin.token`, `definitions[2].duration`). */
export function resolveGatekeeperOptions(options: GatekeeperModuleOptions = {}): ResolvedGatekeeperOptions {
  // Option by option, in the order the checks have always run: what is wrong first is what is named.
  const given = parseOption(MODULE_OPTIONS, options);
  parseOption(IDENTITY_KEYS.optional(), options.identity, 'identity');
  checkHazelcastKeys(options.hazelcast);
  const tracing = parseOption(trueOrFalseOption.optional(), options.tracing, 'tracing') ?? true;
  const connectInBackground = parseOption(trueOrFalseOption.optional(), options.connectInBackground, 'connectInBackground') ?? false;
  const identity = {
    group: parseOption(absentAs('default', NODE_NAME), options.identity?.group, 'identity.group'),
    acquirer: parseOption(absentAs(`${hostname()}-${process.pid}`, NODE_NAME), options.identity?.acquirer, 'identity.acquirer'),
  };
  const elections = resolveElections(options.elections);
  const allocations = resolveAllocations(options.allocations);
  const definitions = [
    ...resolveDefinitions(options.definitions),
    ...elections.values(),
    ...[...allocations.values()].filter((a) => !a.manual).map((a) => a.definition),
  ];
  const seen = new Set<string>();
  definitions.forEach(({ name }, i) => {
    if (seen.has(name)) throw invalidOption(i < (options.definitions?.length ?? 0) ? `definitions[${i}].name` : 'definitions', `"${name}" is defined twice in the module options`, name);
    seen.add(name);
  });
  const policy = parseOption(DEFINITIONS_POLICY, options.definitionsPolicy, 'definitionsPolicy');
  const backends = resolveBackends(options);
  const hazelcast = resolveHazelcast(options.hazelcast);
  // Typos one level down are refused as at the top (`postgres: { connectionstring }` would fall back to the variable).
  parseOption(POSTGRES_OPTION_KEYS.optional(), options.postgres, 'postgres');
  parseOption(REDIS_OPTION_KEYS.optional(), options.redis, 'redis');
  const connection = parseOption(CONNECTION_OPTIONS, given);
  const clock = options.clock ?? systemClock;
  const permitClock = new StoreClock(clock);
  return {
    // Ownership: unique per instance, so a restarted process (pid 1 again, in a container) or a second process
    // with the same name never adopts another's permit and fencing token.
    holder: { ...identity, instance: `${identity.acquirer}/${randomUUID()}` },
    definitions,
    elections,
    allocations,
    definitionsPolicy: policy,
    autoDefine: options.autoDefine ?? true,
    backends,
    hazelcast,
    postgres: connection.postgres ?? {},
    redis: connection.redis ?? {},
    connectTimeoutMs: connection.connectTimeout,
    connectInBackground,
    shutdownTimeoutMs: connection.shutdownTimeout,
    stateDumpIntervalMs: connection.stateDumpInterval,
    clockSkewMs: connection.maxClockSkew,
    quorum: connection.quorum,
    storeTimeoutMs: connection.storeTimeout,
    clock,
    permitClock,
    // One reading of a store's clock serves every capability on it (the backends are one instance per choice).
    taskClock: backends.tasks === backends.permits ? permitClock : new StoreClock(clock),
    membership: resolveMembership(options.membership),
    tasks: resolveTasksOptions(options.tasks),
    schedules: resolveSchedulesOptions(options.schedules),
    metrics: resolveMetricsOptions(options.metrics),
    tracing,
    admin: resolveAdminOptions(options.admin),
  };
}

const POSTGRES_OPTION_KEYS = optionKeys([
  'pool', 'connectionString', 'poolConfig', 'schema', 'mapPrefix', 'callTimeoutMs', 'listenCheckMs', 'onLostData',
] satisfies ReadonlyArray<keyof PostgresBackendOptions>, { lists: true });

const REDIS_OPTION_KEYS = optionKeys([
  'client', 'url', 'connection', 'mapPrefix', 'callTimeoutMs', 'minReplicas', 'listenCheckMs', 'onLostData', 'onWarning', 'onUnsafeConfig',
] satisfies ReadonlyArray<keyof RedisBackendOptions>, { lists: true });

const IDENTITY_KEYS = optionKeys(['group', 'acquirer'] satisfies ReadonlyArray<keyof NodeIdentity>, { lists: true });

/**
 * Every option `GatekeeperModuleOptions` has (a factory's result is checked at run time, as `forRoot`'s type is at
 * compile time), with the schema of its keys where it is an object of options or a list of them, `null` where its
 * value is read whole. Every level refuses keys it does not know; docs/configuration.md lists these, and
 * test/unit/docs-match-code.spec.ts holds it to them.
 */
export const OPTION_SCHEMAS = {
  identity: IDENTITY_KEYS,
  definitions: DEFINITION,
  definitionsPolicy: null,
  autoDefine: null,
  backend: null,
  backends: CAPABILITY_BACKENDS,
  hazelcast: HAZELCAST_OPTION_KEYS,
  postgres: POSTGRES_OPTION_KEYS,
  redis: REDIS_OPTION_KEYS,
  connectTimeout: null,
  connectInBackground: null,
  shutdownTimeout: null,
  maxClockSkew: null,
  quorum: null,
  stateDumpInterval: null,
  storeTimeout: null,
  clock: null,
  membership: MEMBERSHIP_OPTIONS,
  elections: ELECTION,
  allocations: ALLOCATION_KEYS,
  tasks: TASKS_OPTIONS,
  schedules: SCHEDULES_OPTIONS,
  metrics: METRICS_OPTIONS,
  tracing: null,
  admin: ADMIN_OPTIONS,
} satisfies Record<keyof GatekeeperModuleOptions, z.ZodType | null>;

const OPTION_KEYS = Object.keys(OPTION_SCHEMAS) as ReadonlyArray<keyof GatekeeperModuleOptions>;

/** Options of `forRoot` / `forRootAsync` themselves, which a factory cannot return. */
const EXTRAS = new Set(['isGlobal']);

const MODULE_OPTIONS = optionKeys(OPTION_KEYS, {
  unknownKey: (key) => (EXTRAS.has(key) ? 'is an option of forRoot/forRootAsync itself: pass it next to useFactory, not in the factory\'s result' : notAnOption(OPTION_KEYS)(key)),
  lists: true,
});

const DEFINITIONS = z.array(z.unknown(), {
  error: ({ input }) => `must be an array of { name, permits, duration, groupPattern, acquirerPattern }, got ${JSON.stringify(input)}`,
});

const DEFINITIONS_POLICY = absentAs('keep', z.enum(['keep', 'overwrite'], { error: ({ input }) => `must be 'keep' or 'overwrite', got '${String(input)}'` }));

/** The connections' options (checked by each backend when it is made: see `createBackends`), the timeouts and the quorum. */
const CONNECTION_OPTIONS = z.object({
  postgres: passThroughObject<PostgresBackendOptions>('an object (pool, connectionString or poolConfig, schema, mapPrefix)').optional(),
  redis: passThroughObject<RedisBackendOptions>('an object (client, url or connection, mapPrefix)').optional(),
  connectTimeout: absentAs('30s', durationInput()),
  shutdownTimeout: absentAs('10s', durationInput({ allowZero: true })),
  stateDumpInterval: durationInput().optional(),
  maxClockSkew: absentAs('500ms', durationInput({ allowZero: true })),
  quorum: wholeNumberOption({ min: 1 }).optional(),
  storeTimeout: absentAs('5s', durationInput()),
});

/** The `definitions` option, validated; an error names the entry's path (`definitions[2].duration`) and its semaphore. */
function resolveDefinitions(definitions: unknown): SemaphoreDefinition[] {
  return (parseOption(DEFINITIONS.optional(), definitions, 'definitions') ?? []).map((input, i) => {
    try {
      return validateDefinition(input as SemaphoreDefinitionInput);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      const named = error.kind === 'semaphore' && !error.id!.startsWith('<') ? error.id : undefined;
      throw invalidOption(`definitions[${i}].${error.field}`, named ? `(semaphore "${named}") ${error.reason}` : error.reason, named);
    }
  });
}
