import type { RecordCallOptions } from '../../../store/record-map';
import type { IMap, Predicate } from 'hazelcast-client';
import { HazelcastJsonValue, Predicates } from '../hazelcast-client.load';
import { CorruptStateError } from '../../../core/errors/corrupt-state.error';
import { StoreUnavailableError } from '../../../core/errors/store-unavailable.error';
import type { HazelcastConnection } from '../hazelcast-connection';
import type { StoreCallObservers } from '../../../store/store-call-observers';
import { StoreCalls } from '../store-call';
import { FINISHED_STATES, type TaskGroupRecord, type TaskRecord } from '../../../store/tasks/task';
import { decodeGroup, decodeTaskObject, encodeGroup, encodeTask } from '../../../store/tasks/task.codec';
import type { ClaimWatch, TaskQuery, TaskStore, TaskStoreEvents, TaskWatcher, VersionedGroup, VersionedTask } from '../../../store/tasks/task-store';
import { HazelcastPendingListener } from './hazelcast-pending-listener';
import { inClaimOrder, isFinishedBefore, matchesQuery } from '../../../store/tasks/task-store.queries';
import { HazelcastClaimQueries, typeIn } from './hazelcast-claim-queries';
import { decodeStoredTasks, objectOf } from './hazelcast-task-values';


/** How the Hazelcast task store finds its maps. */
export interface HazelcastTaskStoreOptions {
  /** The process's shared connection. */
  connection: HazelcastConnection;
  /** Prefix of the IMaps: `<prefix>.tasks` and `<prefix>.task-groups`. Default `'gatekeeper'`. */
  mapPrefix?: string;
  /** Deadline of a call given none. Default 10 s. */
  callTimeoutMs?: number;
  /** Where its calls are reported (its backend's `storeCallsOf`). Default: nowhere. */
  observers?: StoreCallObservers;
}

/**
 * Tasks in Hazelcast IMaps: `<prefix>.tasks` holds one JSON value per task (HazelcastJsonValue, so members can
 * query it), `<prefix>.task-groups` one per group. Claimable work is found by member-side queries that read about
 * one batch whatever the backlog: pending tasks by ranges of their `rank` on a sorted index ({@link ClaimWindows}),
 * lapsed claims by `state`. New work is heard through an entry listener whose predicate
 * the members evaluate ({@link HazelcastPendingListener}): a node receives one event per task of its types that
 * becomes pending, carrying the task, so it claims without asking first; nothing for claims, renewals or completions.
 */
export class HazelcastTaskStore implements TaskStore {
  private tasks?: IMap<string, HazelcastJsonValue>;
  private groups?: IMap<string, string>;
  private opened = false;
  /** Stops hearing the connection's reconnects (after which pending events may have been missed). */
  private unsubscribeState?: () => void;
  private events: TaskStoreEvents = {};
  private readonly pending = new HazelcastPendingListener((operation, what) => this.call(operation, what, {}), (key, value) => this.decodeEvent(key, value));
  private readonly prefix: string;
  private readonly calls: StoreCalls;
  private readonly claims = new HazelcastClaimQueries({
    map: () => this.taskMap(),
    call: (operation, what, options) => this.call(operation, what, options),
    corrupt: (id, message) => this.events.corruptValue?.(id, message),
  });

  constructor(private readonly options: HazelcastTaskStoreOptions) {
    this.prefix = options.mapPrefix ?? 'gatekeeper';
    this.calls = new StoreCalls(options.callTimeoutMs ?? 10_000, options.observers);
  }

  async connect(events: TaskStoreEvents = {}): Promise<void> {
    this.events = events;
    this.opened = true;
    try {
      const client = await this.options.connection.open();
      const tasks = await this.call(() => client.getMap<string, HazelcastJsonValue>(`${this.prefix}.tasks`), 'open the task map', {});
      this.groups = await this.call(() => client.getMap<string, string>(`${this.prefix}.task-groups`), 'open the task group map', {});
      // One sorted index on state then rank answers the claim path (pending by rank, pending without a rank, running
      // by state) and purges (finished by state); no index on `type`: every index costs the members a JSON read per
      // write, and one on `type` would have them gather every task of a type for an AND that names it.
      await this.call(() => tasks.addIndex({ type: 'SORTED', attributes: ['state', 'rank'] }), 'index task states and ranks', {});
      await this.call(() => tasks.addIndex({ type: 'HASH', attributes: ['uncounted'] }), 'index uncounted tasks', {});
      this.tasks = tasks;
      this.pending.attach(tasks);
      this.unsubscribeState = this.options.connection.onState((state) => {
        if (state === 'connected') this.pending.missed();
      });
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    this.unsubscribeState?.();
    this.unsubscribeState = undefined;
    await this.pending.close();
    this.tasks = undefined;
    this.groups = undefined;
    if (!this.opened) return;
    this.opened = false;
    await this.options.connection.close();
  }

  async read(id: string, options: RecordCallOptions = {}): Promise<VersionedTask> {
    const value = await this.call(() => this.taskMap().get(id), `read task ${id}`, options);
    if (value === null || value === undefined) return { raw: null, task: undefined };
    const stored = objectOf(id, value);
    return { raw: JSON.stringify(stored), task: decodeTaskObject(id, stored) };
  }

  async compareAndSet(id: string, expected: Pick<VersionedTask, 'raw'>, next: TaskRecord | null, options: RecordCallOptions = {}): Promise<boolean> {
    const map = this.taskMap();
    if (next === null) {
      if (expected.raw === null) return true;
      return this.call(() => map.remove(id, new HazelcastJsonValue(expected.raw!)) as Promise<boolean>, `remove task ${id}`, options);
    }
    const value = new HazelcastJsonValue(encodeTask(next));
    if (expected.raw === null) return (await this.call(() => map.putIfAbsent(id, value), `create task ${id}`, options)) === null;
    return this.call(() => map.replaceIfSame(id, new HazelcastJsonValue(expected.raw!), value), `write task ${id}`, options);
  }

  async readGroup(id: string, options: RecordCallOptions = {}): Promise<VersionedGroup> {
    const raw = (await this.call(() => this.groupMap().get(id), `read task group ${id}`, options)) ?? null;
    return { raw, group: raw === null ? undefined : decodeGroup(id, raw) };
  }

  async compareAndSetGroup(id: string, expected: Pick<VersionedGroup, 'raw'>, next: TaskGroupRecord | null, options: RecordCallOptions = {}): Promise<boolean> {
    const map = this.groupMap();
    if (next === null) {
      if (expected.raw === null) return true;
      return this.call(() => map.remove(id, expected.raw!) as Promise<boolean>, `remove task group ${id}`, options);
    }
    const value = encodeGroup(next);
    if (expected.raw === null) return (await this.call(() => map.putIfAbsent(id, value), `create task group ${id}`, options)) === null;
    return this.call(() => map.replaceIfSame(id, expected.raw!, value), `write task group ${id}`, options);
  }

  /** See {@link HazelcastClaimQueries.claimable}. */
  claimable(types: readonly string[], now: number, lapsedBefore: number, limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    return this.claims.claimable(types, now, lapsedBefore, limit, options);
  }

  /** {@inheritDoc TaskStore.scan} (see {@link HazelcastClaimQueries.scan}) */
  scan(types: readonly string[], now: number, lapsedBefore: number, limits: { readonly claimable: number; readonly uncounted: number }, options: RecordCallOptions = {}): Promise<{ claimable: TaskRecord[]; uncounted: TaskRecord[] }> {
    return this.claims.scan(types, now, lapsedBefore, limits, options);
  }

  async uncounted(types: readonly string[], limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    if (types.length === 0) return [];
    const predicate = Predicates.and(Predicates.equal('uncounted', true), typeIn(types));
    const values = await this.call(() => this.taskMap().valuesWithPredicate(predicate), 'find uncounted tasks', options);
    return inClaimOrder(this.decodeAll(values.toArray()), limit);
  }

  async finishedBefore(before: number, limit: number, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    const predicate = stateIn([...FINISHED_STATES], Predicates.lessThan('finishedAt', before));
    const values = await this.call(() => this.taskMap().valuesWithPredicate(predicate), 'find finished tasks', options);
    return inClaimOrder(this.decodeAll(values.toArray()).filter((t) => isFinishedBefore(t, before)), limit);
  }

  async query(query: TaskQuery, options: RecordCallOptions = {}): Promise<TaskRecord[]> {
    const parts = [
      ...(query.types ? [Predicates.inPredicate('type', ...query.types)] : []),
      ...(query.states ? [stateIn(query.states)] : []),
      ...(query.group !== undefined ? [Predicates.equal('group.name', query.group)] : []),
    ];
    const map = this.taskMap();
    const values = await this.call(() => (parts.length ? map.valuesWithPredicate(parts.length === 1 ? parts[0] : Predicates.and(...parts)) : map.values()), 'list tasks', options);
    return inClaimOrder(this.decodeAll(values.toArray()).filter((t) => matchesQuery(t, query)));
  }

  watch(listener: TaskWatcher, types?: readonly string[], claims?: ClaimWatch): () => void {
    return this.pending.watch(listener, types, claims);
  }

  listening(): Promise<void> {
    return this.pending.listening();
  }

  operationCount(): number {
    return this.calls.count();
  }

  /** The task an event carries, or `undefined` (and a report) when it cannot be read: the worker then asks the store. */
  private decodeEvent(key: string, value: unknown): TaskRecord | undefined {
    if (value === null || value === undefined) return undefined;
    try {
      return decodeTaskObject(key, objectOf(key, value));
    } catch (error) {
      this.events.corruptValue?.(key, error instanceof CorruptStateError ? error.message : String(error));
      return undefined;
    }
  }

  private decodeAll(values: unknown[]): TaskRecord[] {
    return decodeStoredTasks(values, (id, message) => this.events.corruptValue?.(id, message)).map(({ task }) => task);
  }

  private taskMap(): IMap<string, HazelcastJsonValue> {
    if (!this.tasks) throw new StoreUnavailableError('the task store is not connected');
    return this.tasks;
  }

  private groupMap(): IMap<string, string> {
    if (!this.groups) throw new StoreUnavailableError('the task store is not connected');
    return this.groups;
  }

  /** One cluster call, through the home of every store call (deadline, failures mapped to the library's errors). */
  private call<T>(operation: () => Promise<T>, what: string, options: RecordCallOptions): Promise<T> {
    return this.calls.run(operation, what, options.timeoutMs);
  }
}

/**
 * Tasks in one of `states` (and matching `and`): an OR of one equality per state, which the members answer from the
 * sorted index on state and rank; an IN beside another condition made them read far more than the states hold.
 */
function stateIn(states: readonly string[], and?: Predicate): Predicate {
  return Predicates.or(...states.map((state) => (and ? Predicates.and(Predicates.equal('state', state), and) : Predicates.equal('state', state))));
}
