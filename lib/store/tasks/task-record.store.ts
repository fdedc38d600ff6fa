import { CorruptStateError } from '../../core/errors/corrupt-state.error';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import type { RecordCallOptions, RecordMap, StoredRecord, Unwatch } from '../record-map';
import { openObservedMap } from '../observed-record-map';
import type { StoreBackend } from '../store-backend';
import { FINISHED_STATES, type TaskClaim, type TaskGroupRecord, type TaskRecord, type TaskState } from './task';
import { decodeGroup, decodeTask, encodeGroup, encodeTask } from './task.codec';
import type { ClaimWatch, TaskQuery, TaskStore, TaskStoreEvents, TaskWatcher, VersionedGroup, VersionedTask } from './task-store';
import { TaskWatches } from './task-watches';
import { inClaimOrder, isClaimable, isFinishedBefore, matchesQuery } from './task-store.queries';

/** The record map tasks live in: one record per task, under its id. */
export const TASK_MAP = 'tasks';
/** The record map of task groups' records: one per group, under its id. */
export const TASK_GROUP_MAP = 'task-groups';
/** The top-level fields of a task's record that the store finds tasks by (the group's name is nested: filtered here). */
export const TASK_INDEXES = ['state', 'type', 'uncounted'] as const;

/**
 * Tasks on any backend of the store contract: the default task store, which every backend gets for free (memory
 * today; a backend with a better native path, as Hazelcast has, keeps its own). One record per task in the map
 * `tasks` (indexed on `state`, `type` and `uncounted`) and one per group in `task-groups`, each written only by
 * compare-and-set on the exact stored text, every call with the caller's deadline. Claimable work is found by state
 * (`pending` and `running`) and filtered here; new work and claims come from the tasks map's change feed, which the
 * store watches only while someone watches it (a submitter hears nothing).
 *
 * The feed may lose events (its `missed`): watchers are then told of work they could not read, so a worker's
 * candidates are read again from the store at its next claim (as every view re-reads when changes may have been
 * missed); the worker's scan (`TaskWorker` asks {@link TaskRecordStore.claimable} every scan interval) bounds what a
 * loss the feed does not tell costs, and a lost claim only makes the nodes share a burst less evenly.
 */
export class TaskRecordStore implements TaskStore {
  private tasks?: RecordMap;
  private groups?: RecordMap;
  private opened = false;
  private events: TaskStoreEvents = {};
  private readonly watches = new TaskWatches(() => this.syncFeed());
  /** The registration of the tasks map's feed under way (or the last one): registrations run one at a time. */
  private feed: Promise<void> = Promise.resolve();
  private unwatchFeed?: Unwatch;

  /**
   * @param backend - The backend the tasks live on (shared with the process's other capabilities).
   * @param callTimeoutMs - Deadline of a call given none, in ms. Default: the backend's.
   */
  constructor(
    /** The backend the tasks live on (shared with the process's other capabilities). */
    protected readonly backend: StoreBackend,
    private readonly callTimeoutMs?: number,
  ) {}

  /** {@inheritDoc TaskStore.connect} */
  async connect(events: TaskStoreEvents = {}): Promise<void> {
    this.events = events;
    // Held from the call on: a close() while the backend is still opening makes it give up.
    this.opened = true;
    try {
      await this.backend.open();
      const tasks = await this.openTasks();
      this.groups = await openObservedMap(this.backend, TASK_GROUP_MAP);
      this.tasks = tasks;
      this.syncFeed(); // for the watches made before connect; `listening()` waits for it
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  /** Opens the record map the tasks live in (a backend's native store may keep them in a place of its own). */
  protected openTasks(): Promise<RecordMap> {
    return openObservedMap(this.backend, TASK_MAP, { indexes: TASK_INDEXES });
  }

  /** {@inheritDoc TaskStore.close} */
  async close(): Promise<void> {
    this.watches.clear();
    this.tasks = undefined;
    this.groups = undefined;
    this.syncFeed();
    await this.feed.catch(() => undefined);
    if (!this.opened) return;
    this.opened = false;
    await this.backend.close();
  }

  /** {@inheritDoc TaskStore.read} */
  async read(id: string, options: RecordCallOptions = {}): Promise<VersionedTask> {
    const record = await this.taskMap().get(id, this.timeout(options));
    return record ? { raw: record.value, task: decodeTask(id, record.value) } : { raw: null, task: undefined };
  }

  /** {@inheritDoc TaskStore.compareAndSet} */
  async compareAndSet(id: string, expected: Pick<VersionedTask, 'raw'>, next: TaskRecord | null, options: RecordCallOptions = {}): Promise<boolean> {
    return this.write(this.taskMap(), id, expected.raw, next && encodeTask(next), options);
  }

  /** {@inheritDoc TaskStore.readGroup} */
  async readGroup(id: string, options: RecordCallOptions = {}): Promise<VersionedGroup> {
    const record = await this.groupMap().get(id, this.timeout(options));
    return record ? { raw: record.value, group: decodeGroup(id, record.value) } : { raw: null, group: undefined };
  }

  /** {@inheritDoc TaskStore.compareAndSetGroup} */
  async compareAndSetGroup(id: string, expected: Pick<VersionedGroup, 'raw'>, next: TaskGroupRecord | null, options: RecordCallOptions = {}): Promise<boolean> {
    return this.write(this.groupMap(), id, expected.raw, next && encodeGroup(next), options);
  }

  /** {@inheritDoc TaskStore.claimable} */
  async claimable(types: readonly string[], now: number, lapsedBefore: number, limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    if (types.length === 0 || limit <= 0) return [];
    const wanted = new Set(types);
    const found = await this.inStates(['pending', 'running'], options);
    return inClaimOrder(found.filter((t) => isClaimable(t, wanted, now, lapsedBefore)), limit);
  }

  /** {@inheritDoc TaskStore.uncounted} */
  async uncounted(types: readonly string[], limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    if (types.length === 0 || limit <= 0) return [];
    const found = this.decodeAll(await this.taskMap().findBy('uncounted', true, this.timeout(options)));
    return inClaimOrder(found.filter((t) => t.uncounted && types.includes(t.type)), limit);
  }

  /** {@inheritDoc TaskStore.finishedBefore} */
  async finishedBefore(before: number, limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    const found = await this.inStates([...FINISHED_STATES], options);
    return inClaimOrder(found.filter((t) => isFinishedBefore(t, before)), limit);
  }

  /** {@inheritDoc TaskStore.query} */
  async query(query: TaskQuery, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    let found: TaskRecord[];
    if (query.states) found = await this.inStates(query.states, options);
    else if (query.types) found = await this.findEach('type', query.types, options);
    else found = this.decodeAll(await this.taskMap().list(this.timeout(options)));
    return inClaimOrder(found.filter((t) => matchesQuery(t, query)));
  }

  /** {@inheritDoc TaskStore.watch} */
  watch(listener: TaskWatcher, types?: readonly string[], claims?: ClaimWatch): () => void {
    return this.watches.add(listener, types, claims);
  }

  /** {@inheritDoc TaskStore.listening} */
  listening(): Promise<void> {
    // A registration that failed is tried again now, once; the caller goes ahead either way (the scan finds the rest).
    return this.feed.catch(() => {
      this.syncFeed();
      return this.feed.catch(() => undefined);
    });
  }

  /** {@inheritDoc TaskStore.operationCount} */
  operationCount(): number {
    return this.backend.operationCount();
  }

  /** A compare-and-set of one record: creates when `expected` is null, removes when `next` is null. */
  private async write(map: RecordMap, key: string, expected: string | null, next: string | null, options: RecordCallOptions): Promise<boolean> {
    const call = this.timeout(options);
    if (next !== null) return expected === null ? map.create(key, next, call) : map.replace({ key, value: expected }, next, call);
    // Removing what was expected absent: it holds only if it is absent still.
    return expected === null ? (await map.get(key, call)) === undefined : map.remove({ key, value: expected }, call);
  }

  /** The readable tasks in any of `states`, one query per state. */
  private inStates(states: readonly TaskState[], options: RecordCallOptions): Promise<TaskRecord[]> {
    return this.findEach('state', states, options);
  }

  /** The readable tasks whose `field` is any of `values`: one query per value, side by side, each with the deadline. */
  private async findEach(field: string, values: readonly string[], options: RecordCallOptions): Promise<TaskRecord[]> {
    const map = this.taskMap();
    const call = this.timeout(options);
    const found = await Promise.all([...new Set(values)].map((value) => map.findBy(field, value, call)));
    return this.decodeAll(found.flat());
  }

  /** The tasks among `records`; one that cannot be read is reported and left out (one bad record must not stop every claim). */
  protected decodeAll(records: StoredRecord[]): TaskRecord[] {
    return records.flatMap(({ key, value }) => this.decodeOne(key, value) ?? []);
  }

  private decodeOne(key: string, value: string): TaskRecord | undefined {
    try {
      return decodeTask(key, value);
    } catch (error) {
      this.events.corruptValue?.(key, error instanceof CorruptStateError ? error.message : String(error));
      return undefined;
    }
  }

  /**
   * A change of the tasks map: a task that became pending is told to the watches of its type, with the task; a claim
   * (running, with a claim) to those that asked for claims, except the instance they name. Everything else is no news.
   */
  private heard(key: string, value: string | null): void {
    if (value === null) return;
    // A task's id starts with its type (`<type>:...`): tasks nobody watches are not even decoded.
    const type = key.slice(0, Math.max(0, key.indexOf(':')));
    if (!this.watches.wants(type)) return;
    const task = this.decodeOne(key, value);
    if (task && (task.state === 'pending' || task.state === 'running')) this.watches.tell(task.type, key, task);
  }

  /**
   * A change told by its fields (a store that tells a new claim by the claim alone, see `RecordChanges.fields`): a claim
   * is told to the watches that hear claims, as a claimed task's change is; anything else is no news.
   */
  private heardFields(key: string, fields: Readonly<Record<string, unknown>>): void {
    const type = key.slice(0, Math.max(0, key.indexOf(':')));
    const claim = fields.claim as TaskClaim | undefined;
    if (!this.watches.wants(type) || !claim || typeof claim.instance !== 'string' || !Number.isFinite(claim.epoch)) return;
    this.watches.tellClaim(type, key, claim);
  }

  /**
   * The feed may have lost changes: every watcher is told of work it could not read (no task), which makes a worker
   * ask the store again at its next claim instead of waiting for its scan, as every view re-reads on a missed change.
   */
  private missed(): void {
    this.watches.missed();
  }

  /** Brings the feed's registration in line with the watches: on while connected and watched, else off. */
  private syncFeed(): void {
    this.feed = this.feed.catch(() => undefined).then(() => this.resubscribe());
  }

  private async resubscribe(): Promise<void> {
    const map = this.tasks;
    const wanted = map !== undefined && this.watches.size > 0;
    if (wanted && !this.unwatchFeed) {
      this.unwatchFeed = await map.watch({ changed: (key, value) => this.heard(key, value), missed: () => this.missed(), fields: (key, fields) => this.heardFields(key, fields) });
    } else if (!wanted && this.unwatchFeed) {
      const stop = this.unwatchFeed;
      this.unwatchFeed = undefined;
      await stop().catch(() => undefined);
    }
  }

  /** A call's deadline: the caller's, else the store's. */
  protected timeout(options: RecordCallOptions): RecordCallOptions {
    return options.timeoutMs === undefined && this.callTimeoutMs !== undefined ? { timeoutMs: this.callTimeoutMs } : { timeoutMs: options.timeoutMs };
  }

  private taskMap(): RecordMap {
    if (!this.tasks) throw new StoreUnavailableError('the task store is not connected');
    return this.tasks;
  }

  private groupMap(): RecordMap {
    if (!this.groups) throw new StoreUnavailableError('the task store is not connected');
    return this.groups;
  }
}
