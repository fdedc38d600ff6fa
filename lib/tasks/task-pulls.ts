import { ClaimAttempts } from './claim-attempts';
import { ClaimRounds } from './claim-rounds';
import { earliestOf } from '../store/store-clock';
import type { TaskRecord } from '../store/tasks/task';
import { claimTerms, type TaskActor } from './task-claim.rules';
import type { Registration } from './task-handler';
import type { TaskRuns } from './task-runs';
import type { TaskFencing } from './task-fencing';
import { STRAGGLERS_READ, type TaskGroups } from './task-groups';
import type { TaskOutcomes } from './task-outcomes';
import type { TaskStore } from '../store/tasks/task-store';
import type { TaskWorkerOptions } from './task-worker.options';

/**
 * How long a reserved task is held for the node that reserved it, in ms: it claims the task by compare-and-set right
 * away, so this only bounds how long a task waits when that node died in between.
 */
const HOLD_MS = 2_000;
/** How long a node waits before it reserves again after a call failed, in ms. */
const RETRY_MS = 100;
/** How long a node waits before it reserves again when others held all it found, in ms. */
const RACED_MS = 5;

/** A task store that hands work out one worker at a time (see `TaskStore.reserve`). */
export type ReservingTaskStore = TaskStore & Required<Pick<TaskStore, 'reserve' | 'awaitWork'>>;

/** Whether `store` hands work out one worker at a time. */
export function reserves(store: TaskStore): store is ReservingTaskStore {
  return store.reserve !== undefined && store.awaitWork !== undefined;
}

/**
 * The claim loop of one node on a store that reserves (`TaskStore.reserve`): whenever it has free slots it asks the
 * store for that many tasks, held for it alone, and claims each by compare-and-set; given fewer, it waits to be woken
 * (the store wakes one waiting node per task that becomes pending) or for the first task backing off to come due. So a
 * node hears of no task it does not take and no other node's claim, nodes never race for one task, and they share a
 * burst as fast as each frees its slots: the cost per task stays the same with 1 node or 10.
 *
 * The scan (every `scanMs`) reserves too, asking for the uncounted tasks in the same call (lapsed claims, a wake lost
 * with the connection, stragglers to count into their groups), and so renews the node's wait for work. Rounds never
 * overlap: a kick during one asks for another after it.
 */
export class TaskPulls {
  private readonly rounds: ClaimRounds;
  /**
   * The store holds this node as waiting for work (its last call found fewer tasks than it asked for): until it is
   * woken, a slot that frees asks the store for nothing (work that comes wakes a waiting node).
   */
  private waiting = false;
  /** Wakes so far: one that comes while a call is under way keeps the node from waiting on that call's answer. */
  private wakes = 0;
  private readonly attempts: ClaimAttempts;
  /** Claims under way, by task: each holds a slot until it settles. */
  private readonly underway = new Map<string, Promise<void>>();
  private timer?: NodeJS.Timeout;
  /** When {@link timer} kicks (epoch ms on this process's clock). */
  private timerAt = 0;
  private woken?: Promise<() => Promise<void>>;
  private leaseCache?: Map<string, number>;
  /** The epoch of this node's last reserve, while its answer is lost (it may have claimed). */
  private unanswered?: number;
  /**
   * The epoch of this node's last reserve: the next one's is above it, so a lost call named by its epoch is that call
   * alone, never an earlier one of the same millisecond whose tasks already ran here.
   */
  private lastEpoch?: number;

  constructor(
    private readonly store: ReservingTaskStore,
    private readonly actor: TaskActor,
    private readonly options: TaskWorkerOptions,
    /** The worker's handlers by type: the types it claims, and how each runs. */
    private readonly handlers: ReadonlyMap<string, Registration>,
    private readonly runs: TaskRuns,
    outcomes: TaskOutcomes,
    private readonly groups: TaskGroups,
    fencing: TaskFencing,
  ) {
    this.attempts = new ClaimAttempts(store, actor, options, outcomes, groups, fencing);
    this.rounds = new ClaimRounds(() => this.fill(), (error) => {
      this.wakeAt(Date.now() + RETRY_MS);
      this.options.onError?.(error, 'claim');
    }, groups, () => [...this.handlers.keys()], options);
  }

  /** Starts claiming, now. */
  start(): void {
    this.rounds.start();
  }

  /** Stops claiming; resolves once the round under way ended and every claim under way settled (one that landed runs). */
  async stop(): Promise<void> {
    const stopping = this.rounds.stop();
    clearTimeout(this.timer);
    await stopping;
    await Promise.allSettled([...this.underway.values()]);
    const woken = this.woken;
    this.woken = undefined;
    await woken?.then((stop) => stop()).catch(() => undefined);
  }

  /** The store said changes may have been missed (a wake among them): reserve again. */
  heard(_task: TaskRecord | undefined): void {
    this.wake();
  }

  /** Claims are not told on a store that reserves. */
  heardClaim(): void {}

  /** The scan came round: lapsed leases, a wake that was lost, and stragglers to count. */
  scanned(): void {
    this.rounds.scanned();
    this.kick();
  }

  /** A handler was registered: reserve for its type too. */
  typesChanged(): void {
    this.leaseCache = undefined;
    this.wake();
  }

  /** Reserves now (or right after the round under way), waiting or not: work may have come. */
  private wake(): void {
    this.waiting = false;
    this.wakes++;
    this.kick();
  }

  /** Reserves now, or right after the round under way. */
  kick(): void {
    this.rounds.kick();
  }

  /** Reserves as many tasks as there are free slots, and claims each, until the store has fewer than asked. */
  private async fill(): Promise<void> {
    const concurrency = this.options.concurrency ?? 4;
    if (this.handlers.size === 0) return;
    // Waits for work before it first reserves: a task that becomes pending after the reserve wakes it.
    this.woken ??= this.store.awaitWork(this.actor.instance, () => this.wake());
    await this.woken.catch((error) => {
      this.woken = undefined;
      throw error;
    });
    while (!this.rounds.stopping) {
      const free = this.runs.freeSlots(concurrency) - this.underway.size;
      if (free <= 0 || (this.waiting && !this.rounds.scanPending)) return;
      const at = this.now();
      // The scan's call asks for the stragglers too, and renews this node's wait for work.
      const scan = this.rounds.takeScan();
      // Read before the types: a handler registered after this call's types were read wakes it again.
      const wakes = this.wakes;
      const types = [...this.handlers.keys()];
      const claim = claimTerms(this.actor, at, this.leases(), this.options.clockSkewMs, { last: this.lastEpoch, again: this.unanswered });
      this.lastEpoch = claim.epoch;
      const { tasks: found, claimed, uncounted, waits, nextDueAt } = await this.store.reserve(types, this.actor.instance, {
        count: free, now: at, lapsedBefore: at - this.options.clockSkewMs, holdMs: HOLD_MS, waitMs: this.waitMs(), uncounted: scan ? STRAGGLERS_READ : 0, claim,
      }).catch((error: unknown) => {
        // It may have claimed: the next call asks for what it claimed again, rather than leave it to lapse.
        this.unanswered = claim.epoch;
        throw error;
      });
      this.unanswered = undefined;
      this.options.onHealthy?.();
      if (scan) void this.groups.countFound(uncounted).catch((error) => this.options.onError?.(error, 'group count'));
      // One answered again (see `ReserveClaim.again`) may be running here already: a claim is run once.
      for (const task of claimed) if (!this.runs.has(task.id) && !this.underway.has(task.id)) this.launchInBackground(task);
      for (const task of found) if (!this.runs.has(task.id) && !this.underway.has(task.id)) this.claimInBackground(task);
      const given = found.length + claimed.length;
      this.waiting = given < free && waits && this.wakes === wakes;
      if (this.waiting) {
        // Waiting to be woken; and the first task backing off wakes it when due (on the earliest the store's time can be).
        if (nextDueAt !== undefined) this.wakeAt(Date.now() + Math.max(0, nextDueAt - this.now()));
        return;
      }
      if (given === 0) {
        // Others held everything it found first: more is there, asked for again in a moment rather than at once.
        this.wakeAt(Date.now() + RACED_MS);
        return;
      }
    }
  }

  /** The lease of each type this node claims, as its handler registered it (made again when a handler is registered). */
  private leases(): ReadonlyMap<string, number> {
    if (!this.leaseCache) this.leaseCache = new Map([...this.handlers].map(([type, r]) => [type, r.leaseMs]));
    return this.leaseCache;
  }

  /** Runs `claimed` (claimed by the store for this node in its reserve) once it is known to vouch, holding a slot meanwhile. */
  private launchInBackground(claimed: TaskRecord): void {
    this.settle(claimed, this.launch(claimed));
  }

  private async launch(claimed: TaskRecord): Promise<void> {
    const registration = this.handlers.get(claimed.type);
    if (registration && (await this.attempts.vouches(claimed))) this.runs.launch(claimed, registration);
  }

  /** Claims `candidate` in the background; as it settles, the node reserves again. */
  private claimInBackground(candidate: TaskRecord): void {
    this.settle(candidate, this.claim(candidate));
  }

  /** Holds a slot for `candidate` until `work` settles; then the node reserves again. */
  private settle(candidate: TaskRecord, work: Promise<void>): void {
    const claim: Promise<void> = work
      .catch((error) => {
        // Its claim may not have landed, and its hold keeps it from everyone else: asked for again once that ends.
        this.wakeAt(Date.now() + HOLD_MS);
        this.options.onError?.(error, 'claim');
      })
      .finally(() => {
        this.underway.delete(candidate.id);
        this.kick();
      });
    this.underway.set(candidate.id, claim);
  }

  /**
   * Claims `found` (see {@link ClaimAttempts}) and starts its run if the claim landed and vouches. A task the store
   * found due by its clock may not be yet by the earliest this node's count of it can be: held for this node, it is
   * claimed once it is (a few ms), not left to wait out its hold.
   */
  private async claim(found: TaskRecord): Promise<void> {
    const early = found.state === 'pending' ? Math.min(found.notBefore - this.now(), HOLD_MS) : 0;
    if (early > 0) await new Promise((resolve) => setTimeout(resolve, early + 1));
    if (this.rounds.stopping) return;
    const registration = this.handlers.get(found.type);
    const landed = registration && (await this.attempts.claim(found, registration));
    if (landed) this.runs.launch(landed.task, registration);
  }

  /** Reserves at `at` (epoch ms on this process's clock), waiting or not, unless that is set for before then. */
  private wakeAt(at: number): void {
    if (this.rounds.stopping || (this.timer && this.timerAt <= at && this.timerAt >= Date.now())) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  /**
   * How long this node's wait for work lasts without a renewal: three scans (each renews it while the node waits), so
   * a node that died is woken no more soon after.
   */
  private waitMs(): number {
    return 3 * (this.options.scanMs ?? 5_000);
  }

  /** The time this node claims by: the earliest the store's time can be (see {@link TaskClaims}). */
  private now(): number {
    return earliestOf(this.options.clock);
  }
}
