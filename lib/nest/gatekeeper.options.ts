import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../core/clock';
import { systemClock } from '../core/clock';
import { validateDefinition } from '../permits/definition.validator';
import { parseOptionDuration } from '../core/duration';
import type { Holder, NodeIdentity } from '../permits/permit';
import type { DurationInput, SemaphoreDefinition, SemaphoreDefinitionInput } from '../permits/semaphore-definition';
import { InvalidDefinitionError } from '../core/errors/invalid-definition.error';
import { InvalidOptionsError } from '../core/errors/invalid-options.error';
import type { HazelcastStoreOptions } from '../permits/hazelcast-permit.store';
import type { PermitStore } from '../permits/permit-store';
import type { PresenceStore } from '../presence/presence-store';
import { DEFAULT_ELECTION_LEASE, electionSemaphore, type ElectionInput } from '../elections/election';
import type { AllocationInput } from '../allocation/allocation';
import { resolveAllocations, type ResolvedAllocation } from '../allocation/allocation-definition';
import { resolveTasksOptions, type ResolvedTasksOptions, type TasksOptions } from './tasks/tasks.options';
import { resolveMetricsOptions, type MetricsOptions, type ResolvedMetricsOptions } from './observability/metrics.options';
import { nearCacheOnLibraryMap } from '../hazelcast/library-maps';
import { resolveAdminOptions, type GatekeeperAdminOptions, type ResolvedAdminOptions } from './admin/gatekeeper-admin.options';

/** Options of `GatekeeperModule.forRoot()` / `forRootAsync()`. Every field is optional. */
export interface GatekeeperModuleOptions {
  /**
   * This node's identity: its `group` (zone, site, environment) and `acquirer` (its name, what acquirer patterns
   * match and logs show). Default group `'default'`, acquirer `<hostname>-<pid>`. Permits belong to the running
   * instance (see `GatekeeperService.instanceId`), never to the name, so two processes that share a name never
   * share a permit; give each its own name anyway, so people can tell them apart (a clash is logged).
   */
  identity?: Partial<NodeIdentity>;
  /** Semaphore definitions to load into the cluster at startup. Validated; a bad one stops the app with an error naming it. */
  definitions?: SemaphoreDefinitionInput[];
  /**
   * What to do when the cluster already has a definition of the same name: `'keep'` it (default: live edits made
   * by operators survive restarts and rolling deploys) or `'overwrite'` it with these options.
   */
  definitionsPolicy?: 'keep' | 'overwrite';
  /**
   * Whether a `@ClusterSingleton` whose semaphore has no definition defines one (1 permit, any group, any
   * acquirer, the decorator's duration). Default `true`. With `false`, such a decorator stops the app at startup.
   */
  autoDefine?: boolean;
  /**
   * Where permits live: `'hazelcast'` (default), `'memory'` (this process only: single instance, local
   * development, tests), or your own {@link PermitStore} instance (e.g. a shared `MemoryPermitStore`).
   */
  store?: 'hazelcast' | 'memory' | PermitStore;
  /**
   * How to reach Hazelcast when `store` is `'hazelcast'`: an existing client, or config for one the module owns.
   * What `clientConfig` leaves out is read from the environment: `GATEKEEPER_HZ_MEMBERS` (comma-separated
   * `host:port`) for `network.clusterMembers` and `GATEKEEPER_HZ_CLUSTER_NAME` for `clusterName`; without them,
   * Hazelcast's defaults (`127.0.0.1:5701`, cluster `dev`). The client's log lines go through Nest's `Logger`
   * (context `Hazelcast`) unless `clientConfig.customLogger` is set, from `WARN` up unless
   * `clientConfig.properties['hazelcast.logging.level']` asks for more (`'INFO'`, `'DEBUG'`).
   */
  hazelcast?: Omit<HazelcastStoreOptions, 'connectTimeoutMs'>;
  /**
   * How long start-up waits for the cluster before it fails with a one-line `ClusterUnreachableError` naming
   * the cluster, its members, where they came from, and the ways forward. Default `'30s'`. Once connected, a lost
   * connection is retried for as long as it takes (permits are denied meanwhile). Ignored with an injected
   * `hazelcast.client`, and with `connectInBackground`.
   */
  connectTimeout?: DurationInput;
  /**
   * Start without waiting for the cluster: the application boots (and listens) at once, while the module keeps
   * trying to connect, with no time limit, logging what it waits for. Until it is connected and has published its
   * definitions, every permit is denied (`NOT_READY`): nothing runs (fail closed). Default `false`.
   */
  connectInBackground?: boolean;
  /** How long shutdown waits for running jobs before releasing permits. Default `'10s'`. A job still running
   * then keeps its permit until it expires, so no other node starts it twice. */
  shutdownTimeout?: DurationInput;
  /**
   * Bound on how far the nodes' clocks may disagree. Permits count as live this much longer when another node
   * decides, and a running job's lease stops vouching for its permit this much earlier, so no two nodes hold a
   * permit at once while clocks stay within the bound. Costs up to twice this in takeover delay. Default `'500ms'`.
   */
  maxClockSkew?: DurationInput;
  /**
   * Least number of Hazelcast members this node must see to grant or refresh any permit (a soft split-brain
   * guard; configure the members' own split-brain protection too). Below it: deny `QUORUM_NOT_MET`, and running
   * jobs' leases fire their signal. Default: no check.
   */
  quorum?: number;
  /**
   * Log the state of every semaphore at this interval (`'1m'`): one line each with holders, groups, expiries,
   * fencing tokens and this node's denials since the last dump. Off by default.
   */
  stateDumpInterval?: DurationInput;
  /**
   * Most a decision may wait for the cluster (a quarter of the permit's duration when that is less), so a stalled
   * member turns into a denial (`STORE_TIMEOUT`) rather than a grant that arrives after it is useful. Default `'5s'`.
   */
  storeTimeout?: DurationInput;
  /** Where time is read. Default: the system clock. */
  clock?: Clock;
  /**
   * Presence: every app instance announces itself (instance id, acquirer, group, start time, library version,
   * optional HTTP address) so each node knows who is here (`ClusterService.participants()`). On by default; `false`
   * turns it off. Costs one write and one read of every entry per node per `interval`.
   */
  membership?: false | MembershipOptions;
  /**
   * Leader elections this node stands in: names (`['leader']`) or {@link ElectionInput}s with a lease and the
   * group and acquirer patterns that say who may lead. Each is stored as a one-permit semaphore
   * `election:<name>` (kept across restarts like `definitions`, so operators' live edits win). An election named by
   * `@LeaderOnly` or `ClusterService.whileLeader` is added with the defaults (10 s lease, anyone). Default: none.
   */
  elections?: Array<string | ElectionInput>;
  /**
   * Allocations this node may take part in: resource sets spread evenly over the live nodes (see
   * `AllocationService.participate`). Each is stored as the semaphore `allocation:<name>` (kept across restarts like
   * `definitions`, so operators' live edits win). One named by `participate` alone gets the defaults. Default: none.
   */
  allocations?: AllocationInput[];
  /**
   * Leased distributed tasks (see `TaskService` and `@TaskHandler`): concurrency, scan interval, retention of
   * finished ids, purge interval. Tasks live in the module's store kind (`<mapPrefix>.tasks` on Hazelcast); a node
   * with no task decorators connects only when it first submits or queries. Default: the defaults of
   * {@link TasksOptions}.
   */
  tasks?: TasksOptions;
  /**
   * Prometheus metrics through `prom-client` (an optional peer: install it to turn this on): permit decisions,
   * job runs, held permits, leadership, allocation sizes, tasks by state, lease losses and store calls (see the
   * the metrics table in docs/observability.md). `true` for the defaults of {@link MetricsOptions}. Default: off.
   */
  metrics?: boolean | MetricsOptions;
  /**
   * OpenTelemetry spans around permit decisions, `@ClusterSingleton` runs and task runs, through
   * `@opentelemetry/api` when the app has it (an optional peer), to the tracer provider its SDK registered. Default
   * `true` (no span, and no cost, without the API or an SDK); `false` turns them off.
   */
  tracing?: boolean;
  /**
   * Mount the admin HTTP API (off by default), and with `console: true` the web console. Needs a guard or a token;
   * see {@link GatekeeperAdminOptions}. From `forRoot`, or from a `forRootAsync` factory (the token from
   * `ConfigService`); checked at bootstrap with the other options.
   */
  admin?: GatekeeperAdminOptions;
}

/** Options of presence (see {@link GatekeeperModuleOptions.membership}). */
export interface MembershipOptions {
  /** How often an instance renews its entry and re-reads everyone's. Default `'5s'`. */
  interval?: DurationInput;
  /** How long an entry holds unless renewed: a silent instance drops out this long (plus the skew bound) after its last renewal. Default: three intervals. */
  ttl?: DurationInput;
  /** Where this instance's HTTP server answers, shown to operators. */
  httpAddress?: string;
  /** Refuse to start when an older live instance already uses this node's acquirer name. Default `false` (a warning). */
  refuseDuplicateName?: boolean;
  /** Where presence lives instead of the module's store (e.g. a shared `MemoryPresenceStore` in tests). */
  store?: PresenceStore;
}

/** The module options after defaults and validation. */
export interface ResolvedGatekeeperOptions {
  /** The identity plus this instance's id. */
  readonly holder: Holder;
  readonly definitions: SemaphoreDefinition[];
  /** The declared elections (their definitions are among `definitions`), by election name. */
  readonly elections: ReadonlyMap<string, SemaphoreDefinition>;
  /** The declared allocations (their definitions are among `definitions`), by allocation name. */
  readonly allocations: ReadonlyMap<string, ResolvedAllocation>;
  readonly tasks: ResolvedTasksOptions;
  /** Metrics, when turned on. */
  readonly metrics?: ResolvedMetricsOptions;
  readonly tracing: boolean;
  /** The admin API, when mounted. */
  readonly admin?: ResolvedAdminOptions;
  readonly definitionsPolicy: 'keep' | 'overwrite';
  readonly autoDefine: boolean;
  readonly store: 'hazelcast' | 'memory' | PermitStore;
  readonly hazelcast: Omit<HazelcastStoreOptions, 'connectTimeoutMs'>;
  readonly connectTimeoutMs: number;
  readonly connectInBackground: boolean;
  readonly shutdownTimeoutMs: number;
  readonly stateDumpIntervalMs: number | undefined;
  readonly clockSkewMs: number;
  readonly quorum: number | undefined;
  readonly storeTimeoutMs: number;
  readonly clock: Clock;
  /** Presence, unless turned off. */
  readonly membership?: {
    readonly intervalMs: number;
    readonly ttlMs: number;
    readonly httpAddress?: string;
    readonly refuseDuplicateName: boolean;
    readonly store?: PresenceStore;
  };
}

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
  const store = options.store ?? 'hazelcast';
  if (typeof store === 'string' && store !== 'hazelcast' && store !== 'memory') {
    throw new InvalidOptionsError('store', `must be 'hazelcast', 'memory' or a PermitStore, got '${store}'`);
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
    store,
    hazelcast: resolveHazelcast(options.hazelcast),
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
  if (given.httpAddress !== undefined && (typeof given.httpAddress !== 'string' || given.httpAddress.trim() === '')) {
    throw new InvalidOptionsError('membership.httpAddress', `must be a non-empty string, got ${JSON.stringify(given.httpAddress)}`);
  }
  return {
    intervalMs,
    ttlMs,
    ...(given.httpAddress !== undefined && { httpAddress: given.httpAddress }),
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

/** The one-permit semaphore definition that backs an election (validated, naming the election's semaphore). */
export function electionDefinition(input: ElectionInput): SemaphoreDefinition {
  return validateDefinition({
    name: electionSemaphore(input.name),
    permits: 1,
    duration: input.lease ?? DEFAULT_ELECTION_LEASE,
    ...(input.groupPattern !== undefined && { groupPattern: input.groupPattern }),
    ...(input.acquirerPattern !== undefined && { acquirerPattern: input.acquirerPattern }),
  });
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
  'identity', 'definitions', 'definitionsPolicy', 'autoDefine', 'store', 'hazelcast', 'connectTimeout',
  'connectInBackground', 'shutdownTimeout', 'maxClockSkew', 'quorum', 'stateDumpInterval', 'storeTimeout', 'clock', 'membership', 'elections',
  'allocations', 'tasks', 'metrics', 'tracing', 'admin',
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
