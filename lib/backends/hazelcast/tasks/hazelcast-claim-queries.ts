import type { RecordCallOptions } from '../../../store/record-map';
import type { HazelcastJsonValue, IMap, Predicate } from 'hazelcast-client';
import { Aggregators, Predicates } from '../hazelcast-client.load';
import type { TaskRecord } from '../../../store/tasks/task';
import { inClaimOrder, isClaimable } from '../../../store/tasks/task-store.queries';
import { ClaimWindows, type RankedSource } from '../../../store/tasks/claim-windows';
import { dueCeiling, isClaimOrderRank, rankCeiling, rankFloor, waitFloor } from '../../../store/tasks/task-rank.rules';
import { decodeStoredTasks, type CorruptValueReport } from './hazelcast-task-values';

/** What the claim queries need of their store: the task map, its calls, and where unreadable values are reported. */
export interface ClaimQueryContext {
  map(): IMap<string, HazelcastJsonValue>;
  /** One cluster call, with the store's deadline and error mapping. */
  call<T>(operation: () => Promise<T>, what: string, options: RecordCallOptions): Promise<T>;
  corrupt: CorruptValueReport;
}

/**
 * The member-side queries that find claimable tasks for the Hazelcast task store, reading about one batch whatever
 * the backlog: pending tasks by ranges of their `rank` on the sorted index over (`state`, `rank`), searched by
 * {@link ClaimWindows}; tasks that waited (a retry backing off) by the range of their waiting ranks that is due;
 * lapsed claims by `state`; pending records of the previous format by `rank = null`.
 */
export class HazelcastClaimQueries {
  private readonly windows = new ClaimWindows();
  /** Values each claim query returned, when a test asks (set to `[]`): what a scan transfers. */
  private claimReads?: number[];

  constructor(private readonly store: ClaimQueryContext) {}

  /**
   * One round: one call for lapsed claims, tasks that waited and are due, pending tasks without a rank (written by the
   * previous version: bounded by what it wrote) and the first window of every type the node has read before, beside a count of what stands above
   * the window of each type that was idle or unknown; then each type's search goes on from there ({@link ClaimWindows})
   * while it has fewer than `limit`.
   */
  async claimable(types: readonly string[], now: number, lapsedBefore: number, limit: number, options: RecordCallOptions): Promise<TaskRecord[]> {
    return (await this.scan(types, now, lapsedBefore, { claimable: limit, uncounted: 0 }, options)).claimable;
  }

  /**
   * {@link claimable}, and with `limits.uncounted` above 0 the uncounted tasks of `types` found by the same first call
   * (one more alternative of its predicate, on the `uncounted` index).
   */
  async scan(types: readonly string[], now: number, lapsedBefore: number, limits: { readonly claimable: number; readonly uncounted: number }, options: RecordCallOptions): Promise<{ claimable: TaskRecord[]; uncounted: TaskRecord[] }> {
    if (types.length === 0) return { claimable: [], uncounted: [] };
    const limit = limits.claimable;
    const due = Predicates.lessEqual('notBefore', now);
    const ofTypes = typeIn(types);
    const source = this.rankedSource(now, options);
    const plans = new Map(types.map((type) => [type, this.windows.plan(type)]));
    const firsts = types.flatMap((type) => {
      const hi = plans.get(type)!.hi;
      return hi === undefined ? [] : [Predicates.and(...pendingRanks(type, undefined, hi), due)];
    });
    // Tasks that waited and are due now: a range of waiting ranks each (the index alone answers it, and the members
    // read only the tasks due, never those still waiting).
    const dues = types.map((type) => Predicates.and(Predicates.equal('state', 'pending'), Predicates.between('rank', waitFloor(type), dueCeiling(type, now))));
    const predicate = Predicates.or(
      Predicates.and(Predicates.equal('state', 'running'), ofTypes, Predicates.lessThan('claim.expiresAt', lapsedBefore)),
      Predicates.and(Predicates.equal('state', 'pending'), Predicates.equal('rank', null), ofTypes, due),
      ...dues,
      ...firsts,
      ...(limits.uncounted > 0 ? [Predicates.and(Predicates.equal('uncounted', true), ofTypes)] : []),
    );
    const counted = types.filter((type) => plans.get(type)!.countRest);
    const [read, ...rests] = await Promise.all([
      this.readTasks(predicate, 'find claimable tasks', options),
      ...counted.map((type) => source.count(type, plans.get(type)!.hi ?? rankFloor(type), rankCeiling(type))),
    ]);
    const wanted = new Set(types);
    const other: TaskRecord[] = [];
    const bases = new Map<string, TaskRecord[]>(types.flatMap((type) => (plans.get(type)!.hi === undefined ? [] : [[type, []]])));
    const uncounted: TaskRecord[] = [];
    for (const { task, ranked } of read) {
      if (task.uncounted && wanted.has(task.type)) uncounted.push(task);
      if (!isClaimable(task, wanted, now, lapsedBefore)) continue; // a rank the previous version carried into another state
      ((ranked && task.state === 'pending' && bases.get(task.type)) || other).push(task);
    }
    const restOf = new Map(counted.map((type, i) => [type, rests[i]]));
    const found = await Promise.all(types.map((type) => this.windows.first(source, type, limit, { plan: plans.get(type)!, tasks: bases.get(type), rest: restOf.get(type) })));
    return { claimable: inClaimOrder([...other, ...found.flat()], limit), uncounted: inClaimOrder(uncounted, limits.uncounted) };
  }

  /** The range questions of {@link ClaimWindows}, about tasks due at `now`. */
  private rankedSource(now: number, options: RecordCallOptions): RankedSource {
    const due = Predicates.lessEqual('notBefore', now);
    // The index alone answers a range; `due` makes the members read each task's JSON, so counts leave it out (a task
    // backing off counts, which only makes a window a little smaller).
    const range = (type: string, above: string | undefined, upTo: string) => Predicates.and(...pendingRanks(type, above, upTo), due);
    const { store } = this;
    return {
      fetch: async (type, above, upTo) => {
        const read = await this.readTasks(range(type, above, upTo), 'find claimable tasks by rank', options);
        return read.flatMap(({ task }) => (task.state === 'pending' && task.type === type ? [task] : []));
      },
      count: async (type, above, upTo) => Number(await store.call(() => store.map().aggregateWithPredicate(Aggregators.count(), Predicates.and(...pendingRanks(type, above, upTo))), 'count claimable tasks by rank', options)),
      lowestAbove: async (type, above) => {
        const lowest = await store.call(() => store.map().aggregateWithPredicate(Aggregators.min<string>('rank'), range(type, above ?? rankFloor(type), rankCeiling(type))), 'find the first claimable rank', options);
        return typeof lowest === 'string' ? lowest : undefined;
      },
    };
  }

  /** The tasks a query finds, each with whether it was stored with a place in claim order (the windows' tasks). */
  private async readTasks(predicate: Predicate, what: string, options: RecordCallOptions): Promise<Array<{ task: TaskRecord; ranked: boolean }>> {
    const values = (await this.store.call(() => this.store.map().valuesWithPredicate(predicate), what, options)).toArray();
    this.claimReads?.push(values.length);
    return decodeStoredTasks(values, this.store.corrupt).map(({ task, stored }) => ({ task, ranked: isClaimOrderRank(task.type, stored.rank) }));
  }
}

/** Pending tasks of `type` ranked above `above` (from the bottom of the type's range without it) up to `upTo`. */
function pendingRanks(type: string, above: string | undefined, upTo: string): Predicate[] {
  const pending = Predicates.equal('state', 'pending');
  return above === undefined
    ? [pending, Predicates.between('rank', rankFloor(type), upTo)]
    : [pending, Predicates.greaterThan('rank', above), Predicates.lessEqual('rank', upTo)];
}

/**
 * Tasks of `types`, as a filter no index answers: a cluster an earlier build created keeps its hash index on `type`,
 * and a member answering an AND from indexes would gather every task of the types from it. The type is checked per
 * task the other, indexed, parts found (a few).
 */
export function typeIn(types: readonly string[]): Predicate {
  return Predicates.regex('type', types.map((type) => type.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')).join('|'));
}
