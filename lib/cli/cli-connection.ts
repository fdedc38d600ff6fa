import { ClusterNameRefusedError } from '../backends/hazelcast/errors/cluster-name-refused.error';
import { SchemaTooNewError } from '../backends/postgres/postgres-schema';
import { postgresUrlProblem } from '../backends/postgres/postgres-backend.check';
import { redisUrlProblem } from '../backends/redis/redis-backend.check';
import { hazelcast } from '../backends/hazelcast/hazelcast-client.load';
import type { Client } from '../backends/hazelcast/hazelcast-client.types';
import { PresenceRecordStore } from '../presence/presence-record.store';
import type { Presence } from '../presence/presence';
import { livePresences } from '../presence/presence.rules';
import type { PermitRecordStore } from '../permits/permit-record.store';
import type { CliConnectionOptions, ReachedStore } from './cli-reached-store';
import { liveLayout, optionsFor, storeKey, type LiveLayout } from './cli-layout';
import type { CapabilityState } from '../core/capability-state';
import { serverStores } from './cli-server-stores';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { systemClock, type Clock } from '../core/clock';
import { ENV } from '../core/env-vars';
import { followStoreClock, StoreClock } from '../store/store-clock';
import { formatDuration, parseDuration } from '../core/duration';
import { CliUsageError, MovedAwayError } from './cli-errors';
import { TaskAdmin } from '../tasks/task-admin';
import { HistoryRecordStore } from '../schedules/history-record.store';
import { ScheduleRecordStore } from '../schedules/schedule-record.store';
import { InvalidInputError } from '../core/errors/invalid-input.error';
import { movedAwayReason, readMoveMarks, type StoreMoveMark } from '../store/store-moves';

export type { CliConnectionOptions } from './cli-reached-store';

/** What the CLI works with: the permit store, and who is here (presence), each on the store the live nodes keep it on. */
export interface CliStores {
  /** The permit store, connected. */
  store: PermitRecordStore;
  /** Where permits read time: the store's clock where it has one (as the apps' permits do), else this machine's. */
  clock: Clock;
  /**
   * Where the live nodes keep each capability's state, as they announce it (`undefined`: no live node says, as
   * with membership off or an older version; the CLI then works on the store it was pointed at).
   */
  layout?: LiveLayout;
  /** The live app instances, or `undefined` when none announces itself (membership off everywhere, or unreadable). */
  liveInstances(): Promise<ReadonlyArray<{ acquirer: string; group: string }> | undefined>;
  /** The live app instances as they announce themselves, oldest first; `undefined` when presence cannot be read. */
  presences(): Promise<Presence[] | undefined>;
  /** The operators' tools over distributed tasks, on the tasks' store (connected on first use). */
  tasks(): Promise<TaskAdmin>;
  /** The jobs' run history as the nodes wrote it, on the history's store (connected on first use). */
  history(): Promise<HistoryRecordStore>;
  /** The runtime schedules' store (the catalog the apps' `ScheduleService` writes), connected on first use. */
  schedules(): Promise<ScheduleRecordStore>;
  /** What the store the CLI was pointed at says of moves between stores (`store move`): capabilities that left it or are arriving. */
  moves(): Promise<StoreMoveMark[]>;
  /**
   * Refuses an operator's edit of `capability` on a store it moved away from (`store move --finish` marked it left):
   * no live node reads it there. Resolves when the edit may go ahead.
   */
  editing(capability: 'schedules' | 'tasks'): Promise<void>;
  /** The connected Hazelcast client the stores share (for what works on the cluster as a whole); Hazelcast only. */
  client(): Client;
  /** Disconnects every store. */
  close(): Promise<void>;
}

/**
 * Connects the stores the way the CLI needs: quiet, and giving up after `connectTimeout` ms. Each capability is
 * worked on where the live nodes say they keep it (their presences, on the store the CLI was pointed at, name the
 * store of each), so with split stores a command goes to the store its capability lives on; a store the options do
 * not name is refused ({@link StoreNotGivenError}) rather than an edit made where no node reads.
 */
export async function connectCliStore(options: CliConnectionOptions): Promise<CliStores> {
  const primary = await reachedStore(options);
  const reachedByKey = new Map<string, ReachedStore>([[storeKey(options), primary]]);
  const closers: Array<() => Promise<void>> = [];
  /** The presence store on each store the CLI reads presences from, opened once (the Hazelcast connection is kept). */
  const presenceStores = new Map<ReachedStore, Promise<PresenceRecordStore>>();
  const presenceOn = (reached: ReachedStore): Promise<PresenceRecordStore> => {
    let opened = presenceStores.get(reached);
    if (!opened) {
      const presence = new PresenceRecordStore(reached.backend);
      opened = presence.connect().then(() => {
        closers.push(() => presence.close());
        return presence;
      });
      opened.catch(() => presenceStores.delete(reached));
      presenceStores.set(reached, opened);
    }
    return opened;
  };
  const livePresencesOn = async (reached: ReachedStore): Promise<Presence[] | undefined> => {
    try {
      return livePresences(await (await presenceOn(reached)).list({ timeoutMs: options.connectTimeout }), Date.now(), 0);
    } catch {
      return undefined;
    }
  };
  // Where the live nodes keep each capability, from their presences on the store the CLI was pointed at. Other stores
  // the options name are not looked at: opening a store the app does not use would make it look used (a PostgreSQL
  // schema created, a Redis prefix marked lost), and `store init` would then refuse it.
  const layout = liveLayout((await livePresencesOn(primary)) ?? []);
  /** Each capability's store: as the live nodes lay them out, else the one the CLI was pointed at. */
  const reachedFor = async (capability: CapabilityState): Promise<ReachedStore> => {
    if (!layout) return primary;
    const wanted = optionsFor(capability, layout, options);
    const key = storeKey(wanted);
    let reached = reachedByKey.get(key);
    if (!reached) reachedByKey.set(key, (reached = await reachedStore(wanted)));
    return reached;
  };
  const permits = await reachedFor('permits');
  const { store } = permits;
  // Permits are timed by the store's clock where it has one: the CLI's edits and listings read it as the apps do.
  const clock = new StoreClock(systemClock);
  followStoreClock(clock, permits.backend);
  try {
    await store.connect({ clock });
    await clock.sync();
  } catch (error) {
    throw cannotReach(permits, options, error);
  }
  /** Opens a capability's store once, on first use; a failure is thrown to each caller and tried again next time. */
  const once = <T>(open: () => Promise<T>): (() => Promise<T>) => {
    let opened: Promise<T> | undefined;
    return () => {
      opened ??= open().catch((error: unknown) => {
        opened = undefined;
        throw error;
      });
      return opened;
    };
  };
  const presences = async (): Promise<Presence[] | undefined> => livePresencesOn(await reachedFor('presence'));
  const tasks = once(async () => {
    const taskStore = (await reachedFor('tasks')).tasks();
    await taskStore.connect();
    closers.push(() => taskStore.close());
    // Retention matters only to purges of the app's own schedule; an operator's purge names its age.
    return new TaskAdmin(taskStore, clock, { retentionMs: 24 * 3_600_000 });
  });
  const history = once(async () => {
    const historyStore = new HistoryRecordStore((await reachedFor('history')).backend);
    await historyStore.connect();
    closers.push(() => historyStore.close());
    return historyStore;
  });
  const schedules = once(async () => {
    const scheduleStore = new ScheduleRecordStore((await reachedFor('schedules')).backend);
    await scheduleStore.connect();
    closers.push(() => scheduleStore.close());
    return scheduleStore;
  });
  return {
    store,
    clock,
    ...(layout !== undefined && { layout }),
    presences,
    async liveInstances() {
      const live = await presences();
      return live && live.length > 0 ? live : undefined;
    },
    client() {
      const client = permits.connection?.client;
      if (!permits.connection) throw new CliUsageError('this command works on a Hazelcast cluster only (--backend hazelcast)', 'backend');
      if (!client) throw new StoreUnavailableError('the connection to the cluster is closed');
      return client;
    },
    tasks,
    history,
    schedules,
    moves: () => readMoveMarks(primary.backend, { timeoutMs: options.connectTimeout }),
    async editing(capability) {
      const marks = await readMoveMarks((await reachedFor(capability)).backend, { timeoutMs: options.connectTimeout });
      const left = marks.find((m) => m.capability === capability && m.state === 'left');
      if (left) {
        throw new MovedAwayError(movedAwayReason(capability, left.other, left.at));
      }
    },
    async close() {
      for (const close of closers.reverse()) await close().catch(() => undefined);
      await store.close();
    },
  };
}

/** The CLI's stores on the backend the options name (none connected yet). */
export async function reachedStore(options: CliConnectionOptions): Promise<ReachedStore> {
  // The Hazelcast half is loaded only for a cluster, so the CLI runs on PostgreSQL without hazelcast-client.
  return options.backend === 'hazelcast' ? (await loadHazelcastStores()).hazelcastStores(options) : serverStores({ ...options, backend: options.backend });
}

/**
 * A failed connection to `reached`, as the CLI says it: one line naming the store, how long it tried and where to
 * point it. The connection's own message says the same for an app (naming its options); the CLI says it once, in its
 * own terms. Anything else (a refused authentication, say) is news, so it is kept.
 */
export function cannotReach(reached: ReachedStore, options: CliConnectionOptions, error: unknown): Error {
  if (error instanceof SchemaTooNewError) {
    // The server was reached: what it holds is a newer version's, so its hint about reaching the server would mislead.
    return new SchemaTooNewError(`${error.message.replace(/: upgrade the library, .*$/, '')}: run the CLI of the version the apps run (npx nestjs-gatekeeper@<version>), or point --pg-schema (or GATEKEEPER_PG_SCHEMA) at another schema`);
  }
  if (error instanceof ClusterNameRefusedError) {
    return new StoreUnavailableError(`${error.message}: give --cluster-name (or GATEKEEPER_HZ_CLUSTER_NAME) the name the members were started with`, { cause: error });
  }
  const why = error instanceof StoreUnavailableError && options.backend === 'hazelcast' ? '' : ` (${(error as Error).message})`;
  return new StoreUnavailableError(`${reached.unreachable} within ${formatDuration(options.connectTimeout)}${why}: ${reached.hint}`, { cause: error });
}

/** The Hazelcast half of the CLI; without `hazelcast-client` installed, one line naming the ways to the other stores. */
async function loadHazelcastStores(): Promise<typeof import('./cli-hazelcast-stores')> {
  const stores = await import('./cli-hazelcast-stores');
  try {
    hazelcast();
    return stores;
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    throw new CliUsageError('no store named: the CLI tried Hazelcast, the default, but hazelcast-client is not installed. For an app on PostgreSQL or Redis, '
      + 'set GATEKEEPER_PG_URL or GATEKEEPER_REDIS_URL as the app does, or give --backend postgres --pg-url <url> / --backend redis --redis-url <url>', 'backend');
  }
}

/** The connection options as given on the command line or in the environment, before validation. */
export interface RawCliConnectionOptions {
  /** `hazelcast`, `postgres` or `redis`; when absent, the one the other options name (see {@link chooseBackend}). */
  backend?: string;
  /** The PostgreSQL connection string. */
  pgUrl?: string;
  /** The schema of the library's PostgreSQL tables. */
  pgSchema?: string;
  /** The Redis URL. */
  redisUrl?: string;
  /** Comma-separated member addresses. */
  members?: string;
  /** The Hazelcast cluster name. */
  clusterName?: string;
  /** The module's `hazelcast.mapPrefix`. */
  mapPrefix?: string;
  /** A duration as the user wrote it (`5000`, `1s`). */
  connectTimeout?: string;
}

/** Which stores are named, on the command line (`flags`) and in the environment (`env`). */
export interface StoresNamed {
  readonly flags: Readonly<Record<Backend, boolean>>;
  readonly env?: Readonly<Record<Backend, boolean>>;
}

type Backend = 'hazelcast' | 'postgres' | 'redis';

/**
 * The store the CLI works on when `--backend` (`GATEKEEPER_BACKEND`) is not given: the one the command line names
 * (`--members`/`--cluster-name`, `--pg-url`, `--redis-url`), else the one the app's environment variables name
 * (`GATEKEEPER_HZ_MEMBERS`/`GATEKEEPER_HZ_CLUSTER_NAME`, `GATEKEEPER_PG_URL`, `GATEKEEPER_REDIS_URL`), so the CLI finds
 * an app's store from the variables the app itself reads. None: Hazelcast on its defaults. Two at one level: refused,
 * naming `--backend`.
 */
export function chooseBackend(named: StoresNamed): Backend {
  const all = ['hazelcast', 'postgres', 'redis'] as const;
  for (const [level, sources] of [
    [named.flags, { hazelcast: '--members', postgres: '--pg-url', redis: '--redis-url' }],
    [named.env, { hazelcast: ENV.hzMembers, postgres: ENV.pgUrl, redis: ENV.redisUrl }],
  ] as const) {
    const given = all.filter((b) => level?.[b]);
    if (given.length === 1) return given[0];
    if (given.length > 1) {
      throw new CliUsageError(`invalid --backend: not given, and ${given.map((b) => sources[b]).join(' and ')} name ${given.length} stores: say which with --backend ${given.join('|')} (or GATEKEEPER_BACKEND)`, 'backend');
    }
  }
  return 'hazelcast';
}

const MEMBER = /^(?:\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+)(?::(\d{1,5}))?$/;

/**
 * Validates the connection options without contacting anything, throwing {@link CliUsageError} naming the
 * option: members as `host` or `host:port` (comma-separated), non-empty names, a duration for the timeout
 * (`5000`, `500ms`, `1s`, `1m`, as in the library).
 */
export function parseCliConnection(raw: RawCliConnectionOptions, named?: StoresNamed): CliConnectionOptions {
  const backend = raw.backend ?? chooseBackend(named ?? { flags: { hazelcast: false, postgres: Boolean(raw.pgUrl?.trim()), redis: Boolean(raw.redisUrl?.trim()) } });
  if (backend !== 'hazelcast' && backend !== 'postgres' && backend !== 'redis') throw new CliUsageError(`invalid --backend: '${backend}' is not hazelcast, postgres or redis`, 'backend');
  const postgresUrl = raw.pgUrl?.trim() || undefined;
  if (backend === 'postgres' && !postgresUrl) {
    throw new CliUsageError('invalid --pg-url: --backend postgres needs a connection string (postgres://user:password@host:5432/db), or GATEKEEPER_PG_URL', 'pgUrl');
  }
  const redisUrl = raw.redisUrl?.trim() || undefined;
  if (backend === 'redis' && !redisUrl) {
    throw new CliUsageError('invalid --redis-url: --backend redis needs a URL (redis://user:password@host:6379/0), or GATEKEEPER_REDIS_URL', 'redisUrl');
  }
  const pgUrlIssue = postgresUrl === undefined ? undefined : postgresUrlProblem(postgresUrl);
  if (pgUrlIssue !== undefined) throw new CliUsageError(`invalid --pg-url (or GATEKEEPER_PG_URL): ${pgUrlIssue}`, 'pgUrl');
  const redisUrlIssue = redisUrl === undefined ? undefined : redisUrlProblem(redisUrl);
  if (redisUrlIssue !== undefined) throw new CliUsageError(`invalid --redis-url (or GATEKEEPER_REDIS_URL): ${redisUrlIssue}`, 'redisUrl');
  const members = (raw.members ?? '').split(',').map((m) => m.trim()).filter(Boolean);
  if (members.length === 0) throw new CliUsageError(`invalid --members: no member address given (host:port,...)`, 'members');
  for (const member of members) {
    const match = MEMBER.exec(member);
    const port = match?.[1] === undefined ? undefined : Number(match[1]);
    if (!match || (port !== undefined && (port < 1 || port > 65_535))) {
      throw new CliUsageError(`invalid --members: '${member}' is not host or host:port (port 1 to 65535)`, 'members');
    }
  }
  for (const [field, option, value] of [['clusterName', '--cluster-name', raw.clusterName], ['mapPrefix', '--map-prefix', raw.mapPrefix], ['pgSchema', '--pg-schema', raw.pgSchema ?? 'gatekeeper']] as const) {
    if (typeof value !== 'string' || value.trim() === '') throw new CliUsageError(`invalid ${option}: must not be empty`, field);
  }
  let connectTimeout: number;
  try {
    connectTimeout = parseDuration(raw.connectTimeout, '<cli>', 'connectTimeout');
  } catch (error) {
    throw new CliUsageError(`invalid --connect-timeout: ${(error as InvalidInputError).reason}`, 'connectTimeout');
  }
  return { backend, ...(postgresUrl && { postgresUrl, postgresSchema: raw.pgSchema ?? 'gatekeeper' }), ...(redisUrl && { redisUrl }), members, clusterName: raw.clusterName as string, mapPrefix: raw.mapPrefix as string, connectTimeout };
}
