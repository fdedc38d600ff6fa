import { StoreUnavailableError } from '../../../core/errors/store-unavailable.error';
import type { RecordCallOptions, RecordMap, StoredRecord } from '../../../store/record-map';
import { storeCallsOf, type StoreCallObservers } from '../../../store/store-call-observers';
import type { TaskRecord } from '../../../store/tasks/task';
import { TASK_MAP, TaskRecordStore } from '../../../store/tasks/task-record.store';
import type { ReserveClaim, TaskQuery, VersionedTask } from '../../../store/tasks/task-store';
import { CLAIM_HEAD, encodeTask } from '../../../store/tasks/task.codec';
import { inClaimOrder, isClaimable, isFinishedBefore, matchesQuery } from '../../../store/tasks/task-store.queries';
import type { StoreBackend } from '../../../store/store-backend';
import type { RedisCalls } from '../redis-calls';
import { TASK_SCRIPTS } from './redis-task-scripts';
import { RedisTaskWrites, type RedisTaskTarget, type TaskWriteMode } from './redis-task-writes';
import { taskIndexLine } from './redis-task-index';

/**
 * The reserve script's claim arguments (see `TASK_SCRIPTS.reserve`): the head of a task never claimed, then the
 * numbers as JSON text, so the script splices in exactly what `decideClaim` writes; '' for a type it does not claim.
 */
function claimArgs(claim: ReserveClaim, instance: string, types: readonly string[]): string[] {
  const expiry = (type: string) => claim.expiresAt.get(type);
  return [CLAIM_HEAD, JSON.stringify(instance), JSON.stringify(claim.acquirer), JSON.stringify(claim.claimedAt), JSON.stringify(claim.epoch),
    claim.again === undefined ? '' : JSON.stringify(claim.again), ...types.map((type) => (Number.isFinite(expiry(type)) ? JSON.stringify(expiry(type)) : ''))];
}

/** `{ key, value, key, value, ... }` as records. */
function pairs(flat: readonly string[] | null): StoredRecord[] {
  const records: StoredRecord[] = [];
  for (let i = 0; flat && i + 1 < flat.length; i += 2) records.push({ key: flat[i], value: flat[i + 1] });
  return records;
}

/**
 * What the Redis task store needs of its backend: the contract, and the backend's calls for its scripts (the Redis
 * backend).
 * @internal
 */
export interface RedisTaskCalls extends StoreBackend {
  /** The backend's calls, for the task scripts; throws while the backend is not open. */
  taskCalls(): RedisCalls;
  /** Hears the messages on the prefix's channel `name` (see `RedisBackend.onChannel`). */
  onChannel(name: string, listener: () => void): Promise<() => Promise<void>>;
}

/**
 * Tasks on Redis, found on indexes of their own: the tasks stay in the record map `tasks` (the hash
 * `{<prefix>}:m:tasks`, read and watched as any record map), and every write of a task is one of the store's scripts
 * (`redis-task-scripts.ts`), which compares the exact stored text and, in the same atomic script, keeps sorted sets
 * beside the hash: per type the pending tasks in claim order, those waiting by when they come due, the running ones by
 * their claim's expiry and the uncounted ones, and the finished ones a purge may take by their finish time. Each query
 * is one script that reads about what it returns, however long the backlog: the first due tasks of each type in claim
 * order, lapsed claims by their expiry, uncounted tasks of the types, finished tasks by their finish time; an
 * operator's listing reads the whole map. A write publishes a task that became pending and a new claim, with its
 * value, on the backend's channel (the base store's feed hears them), nothing of renewals, completions or removals.
 * Compare-and-sets asked for together go out in one script call ({@link RedisTaskWrites}). Groups' records stay in a
 * record map of the backend.
 *
 * Every writer of a prefix's tasks must be this store: a value written around it (the default `TaskRecordStore`, a raw
 * `HSET`) is not indexed; {@link RedisTaskStore.writeRaw} stores one as this store would.
 */
export class RedisTaskStore extends TaskRecordStore {
  private calls?: RedisCalls;
  private map?: RecordMap;
  private readonly writes = new RedisTaskWrites(() => this.target());
  /**
   * Index entries the last claim query read (moved into claim order, ranged over): what it cost the server.
   * @internal
   */
  lastClaimQueryExamined = 0;

  /**
   * @param redis - The Redis backend the tasks live on (shared with the process's other capabilities).
   * @param callTimeoutMs - Deadline of a call given none, in ms. Default: the backend's.
   */
  /** Where its own scripts (past the record map) are reported, as every backend's calls are. */
  private readonly observers: StoreCallObservers;

  constructor(private readonly redis: RedisTaskCalls, callTimeoutMs?: number) {
    super(redis, callTimeoutMs);
    this.observers = storeCallsOf(redis);
  }

  /** The tasks' record map (the base store's reads and feed run on it), and the backend's calls for the scripts. */
  protected override async openTasks(): Promise<RecordMap> {
    const map = await super.openTasks();
    this.calls = this.redis.taskCalls();
    this.map = map;
    return map;
  }

  /** {@inheritDoc TaskStore.close} */
  override async close(): Promise<void> {
    this.calls = undefined;
    this.map = undefined;
    await super.close();
  }

  /**
   * {@inheritDoc TaskStore.compareAndSet}
   *
   * Compare-and-sets asked for in one turn of the event loop share a script call ({@link RedisTaskWrites}).
   */
  override compareAndSet(id: string, expected: Pick<VersionedTask, 'raw'>, next: TaskRecord | null, options: RecordCallOptions = {}): Promise<boolean> {
    const mode: TaskWriteMode = next === null ? (expected.raw === null ? 'a' : 'd') : expected.raw === null ? 'c' : 'r';
    const write = this.writes.write(mode, id, expected.raw, next && encodeTask(next), next ? taskIndexLine(next) : '', this.timeout(options).timeoutMs);
    return this.observers.report('tasks', performance.now(), write, false);
  }

  /** {@inheritDoc TaskStore.replaceEnds} (batched with the compare-and-sets of its turn) */
  replaceEnds(id: string, expected: { readonly head: string; readonly tail: string }, next: { readonly head: string; readonly tail: string }, task: TaskRecord, options: RecordCallOptions = {}): Promise<boolean> {
    const write = this.writes.write('e', id, `${expected.head}\n${expected.tail}`, `${next.head}\n${next.tail}`, taskIndexLine(task), this.timeout(options).timeoutMs);
    return this.observers.report('tasks', performance.now(), write, false);
  }

  /**
   * Stores `raw` under the task id `id` as it is, past the codec and any compare (`null`: removes it), indexed and
   * published as a write of this store: for tests and tools that plant values this version did not write.
   */
  async writeRaw(id: string, raw: string | null, options: RecordCallOptions = {}): Promise<void> {
    await this.writes.write(raw === null ? 'x' : 'p', id, null, raw, '', this.timeout(options).timeoutMs);
  }

  /** {@inheritDoc TaskStore.claimable} */
  override async claimable(types: readonly string[], now: number, lapsedBefore: number, limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    if (types.length === 0 || limit <= 0) return [];
    const wanted = new Set(types);
    const { calls, map } = this.target();
    const { result } = await this.observers.report('tasks', performance.now(), calls.run<[string[], number]>(TASK_SCRIPTS.claimable, [map, now, lapsedBefore, limit, ...wanted], `find claimable tasks of ${types.join(', ')}`, this.timeout(options).timeoutMs));
    this.lastClaimQueryExamined = Number(result[1]);
    return this.claimableOf(result[0], wanted, now, lapsedBefore, limit);
  }

  /** {@inheritDoc TaskStore.uncounted} */
  override async uncounted(types: readonly string[], limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    if (types.length === 0 || limit <= 0) return [];
    const { calls, map } = this.target();
    const wanted = new Set(types);
    const { result } = await this.observers.report('tasks', performance.now(), calls.run<string[]>(TASK_SCRIPTS.uncounted, [map, limit, ...wanted], 'find uncounted tasks', this.timeout(options).timeoutMs));
    return this.uncountedOf(result, wanted, limit);
  }

  /** {@inheritDoc TaskStore.scan} (types and limits are never empty: see `scanTasks`) */
  async scan(types: readonly string[], now: number, lapsedBefore: number, limits: { readonly claimable: number; readonly uncounted: number }, options: RecordCallOptions = {}): Promise<{ claimable: TaskRecord[]; uncounted: TaskRecord[] }> {
    const wanted = new Set(types);
    const { calls, map } = this.target();
    const args = [map, now, lapsedBefore, limits.claimable, limits.uncounted, ...wanted];
    const { result } = await this.observers.report('tasks', performance.now(), calls.run<[string[], number, string[]]>(TASK_SCRIPTS.scan, args, `scan the tasks of ${types.join(', ')}`, this.timeout(options).timeoutMs));
    this.lastClaimQueryExamined = Number(result[1]);
    return { claimable: this.claimableOf(result[0], wanted, now, lapsedBefore, limits.claimable), uncounted: this.uncountedOf(result[2], wanted, limits.uncounted) };
  }

  /** The claimable tasks of a script's answer: a task the index placed by the server's clock may not be due yet by the caller's, and is left out. */
  private claimableOf(found: string[], wanted: ReadonlySet<string>, now: number, lapsedBefore: number, limit: number): TaskRecord[] {
    return inClaimOrder(this.decodeAll(pairs(found)).filter((t) => isClaimable(t, wanted, now, lapsedBefore)), limit);
  }

  /** The uncounted tasks of a script's answer. */
  private uncountedOf(found: string[], wanted: ReadonlySet<string>, limit: number): TaskRecord[] {
    return inClaimOrder(this.decodeAll(pairs(found)).filter((t) => t.uncounted && wanted.has(t.type)), limit);
  }

  /** {@inheritDoc TaskStore.reserve} */
  async reserve(
    types: readonly string[],
    instance: string,
    ask: {
      readonly count: number; readonly now: number; readonly lapsedBefore: number; readonly holdMs: number; readonly waitMs: number;
      readonly uncounted?: number; readonly claim?: ReserveClaim;
    },
    options: RecordCallOptions = {},
  ): Promise<{ tasks: TaskRecord[]; claimed: TaskRecord[]; uncounted: TaskRecord[]; waits: boolean; nextDueAt: number | undefined }> {
    if (types.length === 0 || ask.count <= 0) return { tasks: [], claimed: [], uncounted: [], waits: false, nextDueAt: undefined };
    const wanted = [...new Set(types)];
    const { calls, map } = this.target();
    const most = Math.max(0, ask.uncounted ?? 0);
    const args: Array<string | number> = [map, ask.now, ask.lapsedBefore, ask.count, Math.ceil(ask.holdMs), Math.ceil(ask.waitMs), most, instance, wanted.length, ...wanted];
    if (ask.claim) args.push(...claimArgs(ask.claim, instance, wanted));
    else args.push('');
    // Sent once the turn's writes are in, with them (a node's completions and its next claims: one round trip).
    const own = this.timeout(options).timeoutMs;
    const reserved = this.writes.alongside(async (writes, count, timeoutMs) => {
      const deadline = own === undefined ? timeoutMs : timeoutMs === undefined ? own : Math.min(own, timeoutMs);
      const answer = await calls.run<[string[], string | null, string[], string[], number[]]>(TASK_SCRIPTS.reserve, [...args, ...writes], `reserve tasks of ${types.join(', ')}${count > 0 ? ` and write ${count}` : ''}`, deadline);
      return { answer, landed: Array.from({ length: count }, (_, i) => answer.result[4][i] === 1) };
    });
    const { result } = (await this.observers.report('tasks', performance.now(), reserved)).answer;
    const set = new Set(wanted);
    const held = pairs(result[0]);
    const won = pairs(result[3]);
    // Due by the server's clock, which the caller's may not have reached yet: its claim waits for it (see TaskPulls).
    const tasks = inClaimOrder(this.decodeAll(held).filter((t) => set.has(t.type) && (t.state === 'pending' || isClaimable(t, set, ask.now, ask.lapsedBefore))), ask.count);
    // The script takes what it finds: it waits whenever it found fewer than asked for.
    return { tasks, claimed: this.decodeAll(won), uncounted: this.uncountedOf(result[2], set, most), waits: held.length + won.length < ask.count, nextDueAt: result[1] ? Number(result[1]) : undefined };
  }

  /** {@inheritDoc TaskStore.awaitWork} (a channel of the instance's own: `{<prefix>}:w:<instance>`) */
  awaitWork(instance: string, wake: () => void): Promise<() => Promise<void>> {
    return this.redis.onChannel(`w:${instance}`, wake);
  }

  /** {@inheritDoc TaskStore.finishedBefore} */
  override async finishedBefore(before: number, limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    if (limit <= 0) return [];
    const { calls, map } = this.target();
    const { result } = await this.observers.report('tasks', performance.now(), calls.run<string[]>(TASK_SCRIPTS.finishedBefore, [map, before, limit], 'find finished tasks', this.timeout(options).timeoutMs));
    return inClaimOrder(this.decodeAll(pairs(result)).filter((t) => isFinishedBefore(t, before)), limit);
  }

  /** {@inheritDoc TaskStore.query} */
  override async query(query: TaskQuery, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    // An operator's listing: the whole map once, filtered here.
    const records = await this.mapOf().list(this.timeout(options));
    return inClaimOrder(this.decodeAll(records).filter((t) => matchesQuery(t, query)));
  }

  private target(): RedisTaskTarget {
    if (!this.calls) throw new StoreUnavailableError('the task store is not connected');
    return { calls: this.calls, map: TASK_MAP };
  }

  private mapOf(): RecordMap {
    if (!this.map) throw new StoreUnavailableError('the task store is not connected');
    return this.map;
  }
}
