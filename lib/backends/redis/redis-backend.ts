import { randomUUID } from 'node:crypto';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import type { Counters } from '../../store/counter';
import type { RecordMap, RecordMapSpec } from '../../store/record-map';
import { SharedOpen } from '../../store/shared-open';
import { tellReport } from '../../store/backend-report';
import type { StoreBackend } from '../../store/store-backend';
import type { TaskStore } from '../../store/tasks/task-store';
import type { RedisBackendOptions, RedisClient, RedisLostData } from './redis-backend.options';
import { RedisCalls } from './redis-calls';
import { ClockReadings } from '../../store/clock-readings';
import { newClient } from './redis-client';
import { RedisCounters } from './redis-counters';
import { RedisEvictionCheck } from './redis-eviction';
import { RedisFeed } from './redis-feed';
import { describeRedisLostData, isRestartWithoutKnownLoss, RedisIncarnation, type FoundLoss } from './redis-incarnation';
import { RedisRecordMap } from './redis-record-map';
import { RedisTaskStore } from './tasks/redis-task.store';
import { DECLARE_FRESH } from './redis-script-prelude';
import type { ConnectTarget } from '../../store/connect-failure';
import type { NewStoreRules } from '../../store/new-store-rules';
import type { NewStoreReport } from '../../store/new-store-report';
import { redisConnectTarget } from './redis-connect-target';
import { withDeadline } from '../../core/with-deadline';
import { checkRedisOptions } from './redis-backend.check';

/** How often expired records are dropped, in ms. */
const SWEEP_EVERY_MS = 30_000;
/** Deadline of a call given none. */
const DEFAULT_CALL_TIMEOUT_MS = 10_000;

/**
 * The store contract on Redis (`ioredis`, an optional peer): every call is one Lua script, atomic on the server and
 * one round trip: record maps are hashes written by compare-and-set on the exact stored text, counters `HINCRBY`,
 * TTLs and the store's clock the server's (`TIME`). Each script publishes what it changed on the prefix's channel,
 * heard on a subscriber connection of the backend's own (a dropped or deaf subscriber says changes may have been
 * missed), and first checks that the store is the one this node knew: a Redis that restarted without its data, or
 * came back (a restart, a promoted replica) without writes this node saw, is a loss of data, found by the next call
 * of any node that knew more. Every key is under one hash tag (`{<prefix>}`): one Redis Cluster slot.
 */
export class RedisBackend implements StoreBackend {
  /** {@inheritDoc StoreBackend.kind} */
  readonly kind = 'redis';
  /** The feed checks itself every `listenCheckMs` and tells every loss (`StoreBackend.feedTellsEveryLoss`). */
  readonly feedTellsEveryLoss = true;
  /** The prefix (and hash tag) of the library's keys. */
  readonly mapPrefix: string;
  /** Unique to this instance: its feed's connection checks carry it. */
  private readonly mark = randomUUID();
  private readonly clockReadings = new ClockReadings();
  private readonly opened = new SharedOpen(() => this.start(), () => this.stop());
  private client?: RedisClient;
  private readonly calls: RedisCalls;
  private feed?: RedisFeed;
  private countersOf?: RedisCounters;
  private sweep?: NodeJS.Timeout;
  private readonly incarnation: RedisIncarnation;
  /** The maps this node opened, for the sweep of expired records. */
  private readonly maps = new Set<string>();
  private readonly forgetting = new Set<string>();

  constructor(private readonly options: RedisBackendOptions) {
    const { mapPrefix, minReplicas } = checkRedisOptions(options);
    this.mapPrefix = mapPrefix;
    this.incarnation = new RedisIncarnation({ lost: (lostAt, found) => this.lostData(lostAt, found) });
    this.calls = new RedisCalls(() => this.requireClient(), `{${this.mapPrefix}}`, options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, this.incarnation, minReplicas, redisConnectTarget(options).address);
  }

  /** Connects (the client, unless given), checks the store and starts the change feed; later callers share it. */
  open(): Promise<void> {
    return this.opened.open();
  }

  /** {@inheritDoc StoreBackend.close} */
  close(): Promise<void> {
    return this.opened.close();
  }

  /**
   * Declares the prefix's keys new, before any node used them: its first permits are then granted without a recovery
   * wait. A store found without its incarnation is otherwise taken for one that lost its data (a restart without
   * persistence looks exactly like a new store), and every permit waits out the longest it could have granted. Only
   * for whoever knows nothing was ever granted there (a new deployment, a test's own prefix): on a store that held
   * permits, it would cut the wait that keeps two holders apart. Needs no open backend.
   * @returns whether it declared it (false: the store is in use already, or was found lost).
   */
  async declareFresh(): Promise<boolean> {
    const client = newClient(this.options, DEFAULT_CALL_TIMEOUT_MS);
    try {
      if (client.status === 'wait') await client.connect();
      const done = await withDeadline(client.call('EVAL', DECLARE_FRESH, 1, `{${this.mapPrefix}}`, randomUUID()), this.options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, 'declare the Redis store new');
      return Number(done) === 1;
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      throw new StoreUnavailableError(`Redis call failed (declare the store new): ${(error as Error).message}`, { cause: error });
    } finally {
      client.disconnect(false);
    }
  }

  private async start(): Promise<void> {
    const client = newClient(this.options, DEFAULT_CALL_TIMEOUT_MS);
    // ioredis answers a failed connect with "Connection is closed.": the reason (a refused login, a database index the
    // server lacks, a refused connection) came as an 'error' event before it.
    let reason: unknown;
    let starting = true;
    client.on('error', (error: unknown) => {
      if (starting) reason = error;
    });
    try {
      if (client.status === 'wait') await client.connect();
      // ioredis stays connected when the database index the address names fails to SELECT: on database 0 instead.
      if (reason instanceof Error && /DB index/i.test(reason.message)) throw reason;
      this.client = client;
      // What this node starts from: a loss found later is one it must tell its views of.
      await this.calls.run('check', [], 'check the Redis store');
    } catch (error) {
      this.client = undefined;
      client.disconnect(false);
      if (error instanceof StoreUnavailableError) throw error;
      const cause = reason instanceof Error ? reason : error;
      throw new StoreUnavailableError(`Redis unreachable: ${(cause as Error).message}`, { cause });
    } finally {
      starting = false;
    }
    if (!this.opened.isOpen()) {
      this.client = undefined;
      client.disconnect(false);
      return;
    }
    void this.warnWithoutPersistence(client);
    // A restart or a failover may bring another configuration: checked again on every reconnect.
    const eviction = new RedisEvictionCheck({ error: (message) => this.unsafe(message), warn: (message) => this.warn(message) }, this.options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
    void eviction.check(client);
    client.on('ready', () => void eviction.check(client));
    const channel = `{${this.mapPrefix}}:changes`;
    this.feed = new RedisFeed({
      subscriber: () => client.duplicate(),
      // From a script: so the check also finds what the scripts check first (see RedisCalls.probe). It reads the
      // server's clock as well, so the nodes' counts of it need no reading of their own (see StoreClock.offer).
      publish: async (payload) => {
        const sentAt = performance.now();
        this.clockReadings.tell(await this.calls.probe(payload, this.options.listenCheckMs ?? 5_000), sentAt);
      },
      channel,
      mark: this.mark,
      checkEveryMs: this.options.listenCheckMs ?? 5_000,
    });
    this.sweep = setInterval(() => void this.sweepExpired().catch(() => undefined), SWEEP_EVERY_MS);
    this.sweep.unref();
  }

  /**
   * Drops the records past their time-to-live in every map this node opened (reads already treat them as absent),
   * telling each removal; how many it dropped. One call for all maps, every 30 s: a node's background cost must not
   * grow with the capabilities it has on.
   * @internal
   */
  async sweepExpired(): Promise<number> {
    if (this.maps.size === 0) return 0;
    return Number((await this.calls.run<number>('sweep', [...this.maps], 'drop expired records')).result);
  }

  /** Warns once when Redis keeps nothing on disk; says nothing when it may not be asked (`CONFIG` refused, as on managed services). */
  private async warnWithoutPersistence(client: RedisClient): Promise<void> {
    let aof: unknown;
    try {
      aof = await withDeadline(client.call('CONFIG', 'GET', 'appendonly'), this.options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, 'read appendonly');
    } catch {
      return;
    }
    if (!Array.isArray(aof) || aof[1] !== 'no') return;
    this.warn(`Redis keeps no append-only file (appendonly no): a restart of it loses every permit, runtime schedule, run `
      + 'history and task of the library, and permits are then granted again only after a recovery wait. Set appendonly yes '
      + '(appendfsync everysec) for state that survives a restart.');
  }

  private warn(message: string): void {
    tellReport(this.options.onWarning, message, 'warn', String);
  }

  private unsafe(message: string): void {
    tellReport(this.options.onUnsafeConfig, message, 'error', String);
  }

  private async stop(): Promise<void> {
    const feed = this.feed;
    const client = this.client;
    this.feed = undefined;
    this.client = undefined;
    this.countersOf = undefined;
    clearInterval(this.sweep);
    await feed?.close();
    if (client) await client.quit().catch(() => client.disconnect(false));
  }

  /** The store lost writes since `lostAt`: every view reads again, and the node that dropped records says which. */
  private lostData(lostAt: number, found: FoundLoss | undefined): void {
    this.feed?.missed('lost-data');
    if (found === undefined) return;
    const report: RedisLostData = { prefix: this.mapPrefix, cause: found.why, lostAt, forgotten: found.forgotten, keptEveryWriteSeen: found.keptEveryWriteSeen };
    tellReport(this.options.onLostData, report, isRestartWithoutKnownLoss(report) ? 'warn' : 'error', describeRedisLostData);
  }

  /** {@inheritDoc StoreBackend.map} */
  async map(name: string, spec: RecordMapSpec = {}): Promise<RecordMap> {
    const feed = this.feed;
    if (!feed || !this.client) throw new StoreUnavailableError(`cannot open the ${name} map: the Redis backend is not open`);
    if (spec.forgetOnRestore && !this.forgetting.has(name)) {
      await this.client.call('SADD', `{${this.mapPrefix}}:forget`, name).catch((error: unknown) => {
        throw new StoreUnavailableError(`Redis call failed (register ${name}): ${(error as Error).message}`, { cause: error });
      });
      this.forgetting.add(name);
    }
    this.maps.add(name);
    return new RedisRecordMap(name, name, { calls: this.calls, feed });
  }

  /**
   * The backend's script calls, for the scripts of its native task store (`RedisTaskStore`): each runs with the same
   * prelude, deadline, incarnation check and failure mapping as the backend's own.
   * @internal
   */
  taskCalls(): RedisCalls {
    if (!this.feed || !this.client) throw new StoreUnavailableError('cannot open the tasks: the Redis backend is not open');
    return this.calls;
  }

  /**
   * Hears the messages on `{<prefix>}:<name>` (a task worker's wake-ups, see `RedisTaskStore.awaitWork`) on the feed's
   * subscriber; resolves once subscribed. Returns what unsubscribes.
   * @internal
   */
  onChannel(name: string, listener: () => void): Promise<() => Promise<void>> {
    if (!this.feed) throw new StoreUnavailableError(`cannot hear ${name}: the Redis backend is not open`);
    return this.feed.subscribe(`{${this.mapPrefix}}:${name}`, listener);
  }

  /** {@inheritDoc StoreBackend.counters} */
  async counters(): Promise<Counters> {
    if (!this.client) throw new StoreUnavailableError('cannot count: the Redis backend is not open');
    return (this.countersOf ??= new RedisCounters(this.calls));
  }


  /** The server's clock (`TIME`), in epoch ms. */
  async now(): Promise<number> {
    const [seconds, micros] = (await this.requireClient().call('TIME')) as [string, string];
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /** {@inheritDoc StoreBackend.onClockReading} */
  onClockReading(listener: (storeMs: number, sentAt: number) => void): () => void {
    return this.clockReadings.add(listener);
  }

  /** Declares the map prefix new (see `StoreBackend.declareNew`), as {@link RedisBackend.declareFresh} does. */
  async declareNew(_rules: readonly NewStoreRules[] = []): Promise<NewStoreReport> {
    return { store: `Redis prefix "${this.mapPrefix}"`, declared: await this.declareFresh(), alreadyNew: false, waitsLifted: [] };
  }

  /** {@inheritDoc StoreBackend.describe} */
  describe(): ConnectTarget {
    return redisConnectTarget(this.options);
  }

  /** {@inheritDoc StoreBackend.memberCount} */
  memberCount(): number | undefined {
    return undefined;
  }


  /** {@inheritDoc StoreBackend.isConnected} */
  isConnected(): boolean {
    return this.opened.isOpen() && this.client?.status === 'ready' && this.calls.reachable();
  }

  /** {@inheritDoc StoreBackend.operationCount} */
  operationCount(): number {
    return this.calls.operations();
  }

  /** {@inheritDoc StoreBackend.taskStore} */
  taskStore(): TaskStore {
    return new RedisTaskStore(this);
  }

  private requireClient(): RedisClient {
    if (!this.client) throw new StoreUnavailableError('the Redis backend is not open');
    return this.client;
  }
}
