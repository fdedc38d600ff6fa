import type { RecordCallOptions } from '../record-map';
import type { SqlTransaction } from '../sql-transaction';
import type { TaskClaim, TaskGroupRecord, TaskRecord, TaskState } from './task';

/** A task as read, with the exact stored value a compare-and-set is checked against. */
export interface VersionedTask {
  /** The decoded task, or `undefined` when there is none. */
  readonly task: TaskRecord | undefined;
  /** The stored value (`null` if absent). Opaque to callers. */
  readonly raw: string | null;
}

/** A group's record as read. */
export interface VersionedGroup {
  /** The decoded record, or `undefined` when there is none. */
  readonly group: TaskGroupRecord | undefined;
  /** The stored value (`null` if absent). Opaque to callers. */
  readonly raw: string | null;
}

/** A listing's filter (operators' tools). */
export interface TaskQuery {
  /** Tasks of these types. Default: any type. */
  readonly types?: readonly string[];
  /** Tasks in these states. Default: any state. */
  readonly states?: readonly TaskState[];

  /** Tasks of this group (by name). */
  readonly group?: string;
}

/**
 * Where tasks live: one record per task and one per group, each written only by compare-and-set. Claimable tasks
 * are found by a query the store answers where the data is (a member-side query with indexes on Hazelcast), so no
 * node reads every task to find work; new work comes as events of tasks becoming pending, each with the task, which a
 * node can claim without asking first. Implementations:
 * the Hazelcast store (the cluster) and the memory store (one process); both pass the same contract suite.
 */
export interface TaskStore {
  /** Connects; called once before any other call. `events` is what the store reports to its owner. */
  connect(events?: {
    /** A stored value could not be read and was skipped. */
    corruptValue?(key: string, reason: string): void;
  }): Promise<void>;
  /** Disconnects; releases only what the store itself opened. */
  close(): Promise<void>;
  /** Reads one task. */
  read(id: string, options?: RecordCallOptions): Promise<VersionedTask>;
  /**
   * Writes `next` (or removes the task, with `null`) only if the stored value is still `expected.raw` (`null`:
   * creates). Returns false on conflict.
   */
  compareAndSet(id: string, expected: Pick<VersionedTask, 'raw'>, next: TaskRecord | null, options?: RecordCallOptions): Promise<boolean>;
  /** Reads one group's record. */
  readGroup(id: string, options?: RecordCallOptions): Promise<VersionedGroup>;
  /** Compare-and-set of a group's record, as for tasks. */
  compareAndSetGroup(id: string, expected: Pick<VersionedGroup, 'raw'>, next: TaskGroupRecord | null, options?: RecordCallOptions): Promise<boolean>;
  /**
   * Tasks of `types` that can be claimed at `now`: pending with their backoff over, or running with a claim that
   * expired before `lapsedBefore` (the caller subtracts the skew bound). Highest priority first, then submit order;
   * at most `limit`.
   */
  claimable(types: readonly string[], now: number, lapsedBefore: number, limit: number, options?: RecordCallOptions): Promise<TaskRecord[]>;
  /** Finished grouped tasks of `types` that their group has not counted yet (see `TaskRecord.uncounted`), at most `limit`. */
  uncounted(types: readonly string[], limit: number, options?: RecordCallOptions): Promise<TaskRecord[]>;
  /**
   * What a worker's periodic scan asks, in one call: {@link TaskStore.claimable} and {@link TaskStore.uncounted} with
   * their own limits (`limits.claimable`, `limits.uncounted`), answered as those two would be. Optional: a store
   * without it is asked the two apart.
   */
  scan?(
    types: readonly string[],
    now: number,
    lapsedBefore: number,
    limits: { readonly claimable: number; readonly uncounted: number },
    options?: RecordCallOptions,
  ): Promise<{ readonly claimable: TaskRecord[]; readonly uncounted: TaskRecord[] }>;
  /**
   * Writes a task inside the application's own database transaction (optional: the PostgreSQL store, when that
   * database holds its table): `raw` under `id` if the stored text is still `expected` (`null`: no task there), in the
   * caller's transaction, so it commits with the caller's rows or not at all. Answers whether it landed, and the text
   * stored now when it did not.
   */
  writeInTransaction?(transaction: SqlTransaction, id: string, expected: string | null, raw: string): Promise<{ landed: boolean; current: string | null }>;
  /**
   * A compare-and-set on the ends of the stored text (optional; the store's `compareAndSet` batching applies): if the
   * task's text begins with `expected.head` and ends with `expected.tail` (apart), it becomes `next.head`, what lay
   * between, then `next.tail`, which decodes to `task`; true if it landed. Writers use it only where the ends prove
   * what a whole-text compare would (`finishEnds`: a run's finish), so a write sends its ends, not the whole task
   * twice.
   */
  replaceEnds?(id: string, expected: { readonly head: string; readonly tail: string }, next: { readonly head: string; readonly tail: string }, task: TaskRecord, options?: RecordCallOptions): Promise<boolean>;
  /**
   * Work handed out one worker at a time, where the store can (optional, with {@link TaskStore.awaitWork}): what
   * {@link TaskStore.claimable} answers with `ask.count` as its limit (pending tasks due by the store's clock, which
   * `ask.now` may not have reached yet: claim each once it has), each pending task of it held for `instance` for
   * `ask.holdMs` (no other reserve or claimable query answers it until the hold ends or the task is written: the
   * worker claims it by compare-and-set meanwhile). With fewer than `ask.count`, `instance` waits for work of `types`
   * for `ask.waitMs` (a later reserve renews it; a worker that died is woken no more once it passed): the next task of
   * one that becomes pending wakes it, and no other worker waiting as long; with `ask.count`, it waits no more.
   * `waits`: whether `instance` now waits (false when it got fewer only because other workers held what it found
   * first: it asks again). `nextDueAt`: when the first task of `types` backing off comes due (`undefined`: none). With
   * `ask.uncounted`, also what {@link TaskStore.uncounted} answers with that limit (a worker's scan), in the same call.
   *
   * With `ask.claim`, the store may also claim, in the same call, what it answers (`claimed`: each running under a
   * claim of `instance` on those terms, exactly as `decideClaim` makes it): a store does so for tasks that were never
   * claimed and are due at `claimedAt`, and answers the others in `tasks` as without it. `claimed` counts
   * toward `ask.count`. A call whose answer is lost may have claimed: the next call names it (`claim.again`), or its
   * tasks lapse as those of a worker that died.
   *
   * A store that reserves tells pending work and claims to no watch (see {@link TaskStore.watch}): every worker finds
   * its work by reserving, and nodes share a burst as fast as each frees its slots.
   */
  reserve?(
    types: readonly string[],
    instance: string,
    ask: {
      readonly count: number;
      readonly now: number;
      readonly lapsedBefore: number;
      readonly holdMs: number;
      readonly waitMs: number;
      readonly uncounted?: number;
      /**
       * How the store claims what it answers, where it can: the terms `decideClaim` gives a task never claimed (see
       * `claimTerms`).
       */
      readonly claim?: {
        /** The claiming node's acquirer name. */
        readonly acquirer: string;
        /** When the claim is made (the claim's `claimedAt`, its attempt's `startedAt`). */
        readonly claimedAt: number;
        /**
         * The claim's epoch: at least what `decideClaim` gives at `claimedAt`, and unique to this call among the
         * instance's calls (`again` names a call by it).
         */
        readonly epoch: number;
        /** When the claim expires, per type reserved (a type without one is not claimed). */
        readonly expiresAt: ReadonlyMap<string, number>;
        /**
         * The epoch of this instance's last reserve that claimed, when its answer was lost: what it claimed and still
         * holds under that claim is answered again in `claimed`, first (a store keeps it for `holdMs`).
         */
        readonly again?: number;
      };
    },
    options?: RecordCallOptions,
  ): Promise<{
    readonly tasks: TaskRecord[];
    readonly claimed: TaskRecord[];
    readonly uncounted: TaskRecord[];
    readonly waits: boolean;
    readonly nextDueAt: number | undefined;
  }>;
  /**
   * Calls `wake` whenever work comes that `instance` waits for (see {@link TaskStore.reserve}); resolves once a wake
   * cannot be missed. A wake lost with the store's connection is told to the watches as missed changes. Returns what
   * stops it.
   */
  awaitWork?(instance: string, wake: () => void): Promise<() => Promise<void>>;
  /**
   * Finished tasks (done, failed, invalid, cancelled) that finished before `before` and that no group or parent still
   * waits to hear of, at most `limit`: what a purge removes.
   */
  finishedBefore(before: number, limit: number, options?: RecordCallOptions): Promise<TaskRecord[]>;
  /** Tasks matching `query` (every task when it is empty), in claim order. */
  query(query: TaskQuery, options?: RecordCallOptions): Promise<TaskRecord[]>;
  /**
   * Hears a task become pending (submitted, retried, handed back): its type, id, and the task as written (absent when
   * it could not be read: ask the store), for `types` only (every type without it). Work of other types is not sent
   * to this process at all, and a process that watches nothing hears nothing. Events may be lost. A store that
   * reserves ({@link TaskStore.reserve}) tells a watch only that changes may have been missed.
   *
   * With `claims`, also hears the claims of tasks of `types` (a task that became running): nodes that hear each
   * other's claims share a burst of work evenly. A store may ignore it; nodes then share work as their races go.
   * Returns the function that stops the watch.
   */
  watch(
    listener: (type: string, id: string, task?: TaskRecord) => void,
    types?: readonly string[],
    claims?: {
      /**
       * Told of each claim (by any node, this one included): its type, id and the claim as written. A renewal of the
       * claim may be told again, with the same epoch.
       */
      readonly listener: (type: string, id: string, claim: TaskClaim) => void;
      /** An instance whose own claims need not be told (the watching node's): a store may leave them out where it sends events from. */
      readonly except?: string;
    },
  ): () => void;
  /**
   * Resolves once every watch so far is in place where events are sent from (a member-side listener on Hazelcast): a
   * query made after it cannot miss a task that becomes pending later. Never rejects (a failed registration leaves
   * new work to the scan).
   */
  listening(): Promise<void>;
  /** How many calls this store has made to its backend so far (round trips, for the Hazelcast store). */
  operationCount(): number;
}

/** What a task store reports to its owner (see {@link TaskStore.connect}). */
export type TaskStoreEvents = NonNullable<Parameters<TaskStore['connect']>[0]>;
/** How a reserve claims what it answers (see {@link TaskStore.reserve}). */
export type ReserveClaim = NonNullable<Parameters<NonNullable<TaskStore['reserve']>>[2]['claim']>;
/** Told of a task that became pending (see {@link TaskStore.watch}). */
export type TaskWatcher = Parameters<TaskStore['watch']>[0];
/** What a watch hears of claims (see {@link TaskStore.watch}). */
export type ClaimWatch = NonNullable<Parameters<TaskStore['watch']>[2]>;

export type { SqlTransaction } from '../sql-transaction';
