import type { Clock } from '../../core/clock';
import type { StoreClock } from '../../store/store-clock';
import type { Holder, NodeIdentity } from '../../permits/permit';
import type { DurationInput, SemaphoreDefinition, SemaphoreDefinitionInput } from '../../permits/semaphore-definition';
import type { HazelcastBackendOptions } from '../../backends/hazelcast/hazelcast-backend';
import type { PostgresBackendOptions } from '../../backends/postgres/postgres-backend.options';
import type { RedisBackendOptions } from '../../backends/redis/redis-backend.options';
import type { BackendChoice, CapabilityBackends, ResolvedBackends } from './backend-choice.options';
import type { ElectionInput } from '../../elections/election';
import type { AllocationInput } from '../../allocation/allocation';
import type { ResolvedAllocation } from '../../allocation/allocation-definition';
import type { ResolvedTasksOptions, TasksOptions } from './tasks.options';
import type { ResolvedSchedulesOptions, SchedulesOptions } from './schedules.options';
import type { MetricsOptions, ResolvedMetricsOptions } from './metrics.options';
import type { GatekeeperAdminOptions, ResolvedAdminOptions } from './gatekeeper-admin.options';

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
   * Where the library keeps its state: `'hazelcast'` (default), `'memory'` (this process only: single instance,
   * local development, tests), `'postgres'` (PostgreSQL through `pg`, configured by `postgres`), `'redis'` (Redis
   * through `ioredis`, configured by `redis`), or a `StoreBackend` instance (a backend of the store contract, yours or one of
   * the library's built on a client you already have). `backends` may put a capability elsewhere.
   */
  backend?: BackendChoice;
  /**
   * A backend per capability, over `backend`: for example `{ history: durable, schedules: durable }` to keep the
   * run history and runtime schedules on a store that survives a full restart while permits stay on Hazelcast.
   * `'hazelcast'`, `'memory'`, `'postgres'` and `'redis'` name one backend each for the whole module, shared by the capabilities
   * given them.
   */
  backends?: CapabilityBackends;
  /**
   * How to reach Hazelcast when a capability is on `'hazelcast'`: an existing client, or config for one the module owns.
   * What `clientConfig` leaves out is read from the environment: `GATEKEEPER_HZ_MEMBERS` (comma-separated
   * `host:port`) for `network.clusterMembers` and `GATEKEEPER_HZ_CLUSTER_NAME` for `clusterName`; without them,
   * Hazelcast's defaults (`127.0.0.1:5701`, cluster `dev`). The client's log lines go through Nest's `Logger`
   * (context `Hazelcast`) unless `clientConfig.customLogger` is set, from `WARN` up unless
   * `clientConfig.properties['hazelcast.logging.level']` asks for more (`'INFO'`, `'DEBUG'`).
   */
  hazelcast?: Pick<HazelcastBackendOptions, 'client' | 'clientConfig' | 'mapPrefix' | 'callTimeoutMs'>;
  /**
   * How to reach PostgreSQL when a capability is on `'postgres'`: the application's `pg.Pool` (`pool`), a
   * `connectionString` or a `poolConfig` for a pool the module owns; without any, the connection string in
   * `GATEKEEPER_PG_URL`. `pg` must be installed.
   */
  postgres?: PostgresBackendOptions;
  /**
   * How to reach Redis when a capability is on `'redis'`: the application's `ioredis` client (`client`), a `url` or
   * `connection` options for a client the module owns; without any, the URL in `GATEKEEPER_REDIS_URL`. `ioredis`
   * must be installed.
   */
  redis?: RedisBackendOptions;
  /**
   * How long start-up waits for the cluster before it fails with a one-line `StoreUnreachableError` naming
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
   * Schedules: the run history every `@ClusterSingleton` job keeps in the cluster (runs kept per job, how often a
   * node writes). Default: the defaults of {@link SchedulesOptions}.
   */
  schedules?: SchedulesOptions;
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
  /**
   * Where this instance's HTTP server answers, `http(s)://host:port[/prefix]` (`http://10.0.0.5:3000`; a bare
   * `host:port` means `http://`): where the CLI's `jobs describe`, `run`, `pause` and `resume` ask this node's admin
   * API, and what `GET /cluster` shows. Default: the address the app listens on, announced once `app.listen()` ran
   * (bound to every interface: this machine's first external IPv4 address). Set it when others reach the node
   * elsewhere: a proxy, NAT, a container's mapped port, a global prefix.
   */
  httpAddress?: string;
  /** Refuse to start when an older live instance already uses this node's acquirer name. Default `false` (a warning). */
  refuseDuplicateName?: boolean;
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
  readonly schedules: ResolvedSchedulesOptions;
  /** Metrics, when turned on. */
  readonly metrics?: ResolvedMetricsOptions;
  readonly tracing: boolean;
  /** The admin API, when mounted. */
  readonly admin?: ResolvedAdminOptions;
  readonly definitionsPolicy: 'keep' | 'overwrite';
  readonly autoDefine: boolean;
  /** The backend of each capability's state. */
  readonly backends: ResolvedBackends;
  readonly hazelcast: NonNullable<GatekeeperModuleOptions['hazelcast']>;
  readonly postgres: PostgresBackendOptions;
  readonly redis: RedisBackendOptions;
  readonly connectTimeoutMs: number;
  readonly connectInBackground: boolean;
  readonly shutdownTimeoutMs: number;
  readonly stateDumpIntervalMs: number | undefined;
  readonly clockSkewMs: number;
  readonly quorum: number | undefined;
  readonly storeTimeoutMs: number;
  readonly clock: Clock;
  /**
   * Where permits (and the elections and allocations built on them) read time: the permits' store's own clock where it
   * has one (PostgreSQL, Redis: attached when the backends are made), counted on this process's monotonic clock;
   * else `clock`.
   */
  readonly permitClock: StoreClock;
  /** Where tasks read time, the same way: their store's clock where it has one (the permits' clock on the same store). */
  readonly taskClock: StoreClock;
  /** Presence, unless turned off. */
  readonly membership?: {
    readonly intervalMs: number;
    readonly ttlMs: number;
    readonly httpAddress?: string;
    readonly refuseDuplicateName: boolean;
  };
}
