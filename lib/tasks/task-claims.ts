import { ClaimAttempts } from './claim-attempts';
import { ClaimRounds } from './claim-rounds';
import { ClaimTurns } from './claim-turns';
import { earliestOf } from '../store/store-clock';
import { ReadyList } from './ready-list';
import type { TaskClaim, TaskRecord } from '../store/tasks/task';
import type { TaskActor } from './task-claim.rules';
import type { Registration } from './task-handler';
import type { TaskRuns } from './task-runs';
import type { TaskFencing } from './task-fencing';
import { STRAGGLERS_READ, type TaskGroups } from './task-groups';
import { scanTasks } from '../store/tasks/task-store.queries';
import type { TaskOutcomes } from './task-outcomes';
import type { TaskStore } from '../store/tasks/task-store';
import type { TaskWorkerOptions } from './task-worker.options';

/** How often, at most, a signal without its task (or the scan) makes a node query again. */
const READY_REFRESH_MS = 100;
/** Candidates one query returns to a node. */
const READY_LIMIT = 256;
/**
 * Claims that failed in a row (others won the race, or the call failed), in multiples of the node's slots, after which
 * the node claims no more until it asked the store again, at most every {@link READY_REFRESH_MS}.
 */
const LOST_STREAK_SLOTS = 4;
/** Candidates a node keeps, from queries and events. */
const READY_CAPACITY = 1_024;
/**
 * Claims landed since the last query after which a list drained down to its horizon is refilled at once, not after
 * {@link READY_REFRESH_MS}: the node is working through a backlog deeper than one answer, and held to one answer per
 * 100 ms it would claim no more than 2,560 tasks a second however fast its handlers. Fewer landed claims (the
 * others won the races) wait as before, so a node that keeps losing does not query in a loop.
 */
const REQUERY_AFTER_CLAIMS = READY_LIMIT / 8;

/**
 * The claim loop of one node: claims tasks of the types it has handlers for (highest priority first, then submit
 * order) when told of new work and when the scan comes round, until it runs `concurrency` handlers, and hands each
 * claim that landed to its runs. Rounds (a query if due, then claims for the free slots) never overlap: a kick during
 * one asks for another after it. Claims run on in the background, each holding its slot until it settles.
 *
 * Nodes take turns in a burst (see {@link ClaimTurns}): claims under way and those a round starts together stay within
 * the node's turn.
 */
export class TaskClaims {
  private readonly rounds: ClaimRounds;
  /**
   * Claimable tasks as a query found them and events told since, in claim order: claimed from the head, so a task
   * an event brought is claimed with no query at all (a stale entry only fails its compare-and-set). Queried again
   * when it holds nothing it can vouch for (see {@link ReadyList}), after a claim failed, after a streak of claims that
   * failed, and when the scan comes round.
   */
  private readonly ready = new ReadyList(READY_CAPACITY);
  private readyAt = 0;
  /** Claims this node landed since its last query began. */
  private landedSinceQuery = 0;
  /** The scan came round: query, at most every {@link READY_REFRESH_MS}. */
  private signalled = true;
  /** Query at once: the list holds nothing it can vouch for, or a claim failed (its candidate left the list). */
  private refresh = true;
  /** Wakes the node when the first task it holds that is backing off becomes due. */
  private dueTimer?: NodeJS.Timeout;
  private readonly turns: ClaimTurns;
  private readonly attempts: ClaimAttempts;
  /** Claims under way, by task: each holds a slot until it settles. */
  private readonly underway = new Map<string, Promise<void>>();
  /** Claims that failed (lost or threw) since this node's last landed one: a query does not end a streak. */
  private lostStreak = 0;

  constructor(
    private readonly store: TaskStore,
    private readonly actor: TaskActor,
    private readonly options: TaskWorkerOptions,
    /** The worker's handlers by type: the types it claims, and how each runs. */
    private readonly handlers: ReadonlyMap<string, Registration>,
    private readonly runs: TaskRuns,
    outcomes: TaskOutcomes,
    private readonly groups: TaskGroups,
    fencing: TaskFencing,
  ) {
    this.turns = new ClaimTurns(actor.instance, options.concurrency ?? 4, options.clockSkewMs);
    this.attempts = new ClaimAttempts(store, actor, options, outcomes, groups, fencing);
    this.rounds = new ClaimRounds(() => this.fill(), (error) => this.options.onError?.(error, 'claim'), groups, () => [...this.handlers.keys()], options);
  }

  /** Starts claiming, now. */
  start(): void {
    this.rounds.start();
  }

  /** Stops claiming; resolves once the round under way ended and every claim under way settled (one that landed runs). */
  async stop(): Promise<void> {
    const stopping = this.rounds.stop();
    clearTimeout(this.dueTimer);
    await stopping;
    await Promise.allSettled([...this.underway.values()]);
  }

  /** The store told of work of a type this node handles: the task as it is now, or `undefined` when it could not be read. */
  heard(task: TaskRecord | undefined): void {
    if (task) this.ready.offer(task, this.now());
    else this.ready.markIncomplete(); // heard of work it could not read: ask the store
    this.kick();
  }

  /** The store told of a claim of a type this node handles, by any node: its share, and a candidate gone. */
  heardClaim(id: string, claim: TaskClaim): void {
    if (claim.instance !== this.actor.instance) this.ready.claimedElsewhere(id, claim.epoch);
    if (this.turns.heard(id, claim, this.now())) this.kick();
  }

  /** The scan came round: lapsed leases, any signal that was lost, and stragglers to count into their groups. */
  scanned(): void {
    this.signalled = true;
    this.rounds.scanned();
    this.kick();
  }

  /** A handler was registered: the list never asked for its type. */
  typesChanged(): void {
    this.ready.markIncomplete();
    this.kick();
  }

  /** Claims now, or right after the round under way. */
  kick(): void {
    this.rounds.kick();
  }

  /**
   * Claims until the node runs `concurrency` handlers (claims under way count) or nothing claimable is left. Claims
   * are not waited for: each takes a slot while it is under way, and as it settles (landed or lost) the node claims
   * again, so one slow answer never holds the others' slots. After {@link LOST_STREAK_SLOTS} × `concurrency` claims
   * failed in a row, it claims nothing more until it asked the store again, at most every {@link READY_REFRESH_MS},
   * rather than spin on a stale list or a failing store.
   */
  private async fill(): Promise<void> {
    const concurrency = this.options.concurrency ?? 4;
    while (!this.rounds.stopping && this.freeSlots(concurrency) > 0) {
      const now = this.now();
      if (this.lostStreak >= LOST_STREAK_SLOTS * concurrency) {
        // Claims kept failing: ask the store again, but not before the refresh window passed (claims still under way
        // that settle meanwhile wake the loop, which stops here again).
        this.signalled = true;
        if (now - this.readyAt < READY_REFRESH_MS) {
          this.wakeLater(now);
          return;
        }
      }
      const query = this.queryDue(now);
      if (query) {
        this.refresh = false;
        this.signalled = false;
        this.readyAt = now;
        this.landedSinceQuery = 0;
        const mark = this.ready.beginQuery();
        let found: TaskRecord[];
        try {
          await this.store.listening(); // never a query before the watch of its types is in place: no task falls between
          // Due by the clock once the watch is in place: a task submitted while it was set up came with no event, and
          // a query asked as of before its submit would leave it out as not due yet, until the next scan.
          const at = this.now();
          const types = [...this.handlers.keys()];
          if (this.rounds.takeScan()) {
            // The scan: the stragglers come in the same call, and are counted beside the claims.
            const scanned = await scanTasks(this.store, types, at, at - this.options.clockSkewMs, { claimable: READY_LIMIT, uncounted: STRAGGLERS_READ });
            found = scanned.claimable;
            void this.groups.countFound(scanned.uncounted).catch((error) => this.options.onError?.(error, 'group count'));
          } else {
            found = await this.store.claimable(types, at, at - this.options.clockSkewMs, READY_LIMIT);
          }
        } catch (error) {
          this.signalled = true; // asked again a little later, not only at the next scan
          this.wakeLater(now);
          throw error;
        }
        this.options.onHealthy?.();
        this.ready.replace(found, READY_LIMIT, mark, now);
        if (this.rounds.stopping) return;
      }
      // As many claims as there are free slots (each is one compare-and-set), and no more than its turn allows.
      // Claims waiting unread on the socket are read before an immediate runs.
      const turn = await this.turns.turn(() => this.now(), () => new Promise((resolve) => setImmediate(resolve)), this.ready.headSubmittedAt());
      if (this.rounds.stopping) return;
      // The turn counts landed claims only: those under way come out of it, or each round would take it again.
      const room = Math.min(this.freeSlots(concurrency), turn - this.underway.size);
      if (room <= 0) {
        this.wakeLater(now); // claims under way wake it as they settle; on a turn of 0, another node's claim or its timer
        return;
      }
      // Out of a window of the list's head as wide as the slots of the nodes claiming now, this node's part first.
      const owner = this.turns.owner(now);
      const batch = this.ready.take(room, concurrency * owner.nodes, now, (id) => this.runs.has(id) || this.underway.has(id), owner.mine);
      if (batch.length === 0) {
        if (!query && this.ready.incomplete && this.underway.size === 0) {
          // Nothing left it can vouch for: the store may hold more. Asked at once, unless it asked just now and has
          // claimed little since. With claims under way it waits for them: each wakes the loop as it settles.
          if (now - this.readyAt >= READY_REFRESH_MS || this.landedSinceQuery >= REQUERY_AFTER_CLAIMS) {
            this.refresh = true;
            continue;
          }
          this.signalled = true;
        }
        this.wakeLater(now);
        return;
      }
      for (const candidate of batch) this.claimInBackground(candidate);
    }
  }

  /** Handler slots free for new claims: those of the runs, less the claims under way. */
  private freeSlots(concurrency: number): number {
    return this.runs.freeSlots(concurrency) - this.underway.size;
  }

  /** Claims `candidate` in the background; as it settles, the node claims again. */
  private claimInBackground(candidate: TaskRecord): void {
    const claim: Promise<void> = this.claim(candidate)
      .then((landed) => {
        this.lostStreak = landed ? 0 : this.lostStreak + 1;
      })
      .catch((error) => {
        this.lostStreak++;
        this.refresh = true; // its candidate left the list with the claim that failed: ask the store next time
        this.options.onError?.(error, 'claim');
      })
      .finally(() => {
        this.underway.delete(candidate.id);
        this.kick();
      });
    this.underway.set(candidate.id, claim);
  }

  /**
   * The time this node claims by: the earliest the store's time can be (see `earliestOf`), one clock for what is due,
   * what the store is asked for and whether another's claim lapsed, so they never disagree. Its own claim's lease is
   * measured by the clock's `now()`.
   */
  private now(): number {
    return earliestOf(this.options.clock);
  }

  /**
   * Whether to ask the store: the list has nothing it can vouch for, or a claim failed, or the scan (or a streak of
   * claims that failed) asks, at most every {@link READY_REFRESH_MS}.
   */
  private queryDue(now: number): boolean {
    return this.refresh || (this.signalled && now - this.readyAt >= READY_REFRESH_MS);
  }

  /** With nothing to claim now: wakes the node when a task it holds ends its backoff, or a held-off query is due. */
  private wakeLater(now: number): void {
    if (this.rounds.stopping) return;
    const due = [
      this.ready.nextDueAt(),
      this.signalled ? this.readyAt + READY_REFRESH_MS : undefined,
      this.turns.wakeAt(),
    ].filter((at) => at !== undefined);
    if (due.length === 0) return;
    clearTimeout(this.dueTimer);
    this.dueTimer = setTimeout(() => this.kick(), Math.max(0, Math.min(...due) - now));
    this.dueTimer.unref();
  }

  /** Claims `found` (see {@link ClaimAttempts}) and starts its run if the claim landed and vouches. */
  private async claim(found: TaskRecord): Promise<boolean> {
    const registration = this.handlers.get(found.type);
    const landed = registration && (await this.attempts.claim(found, registration));
    if (!landed) return false;
    this.turns.heard(found.id, landed.claim, this.now()); // its own claims are not told back
    this.landedSinceQuery++;
    this.runs.launch(landed.task, registration);
    return true;
  }
}
