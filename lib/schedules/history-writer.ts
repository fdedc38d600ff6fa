import { randomUUID } from 'node:crypto';
import { readDecideWrite, type RecordSlot } from '../store/read-decide-write';
import type { HistoryDelta, JobHistory } from './job-history';
import { encodeHistory } from './job-history.codec';
import { judgeHealth, madeAnew, mergeHistory, restoreHistory, type HealthChange } from './job-history.rules';
import { judgeSlots, type SlotCalendar, type SlotNews } from './slot-ledger.rules';
import type { HistoryStore, StoredHistory } from './history-store';

/**
 * How often a node checks that the histories it last wrote are still in the store (one read of them all): a store
 * that lost its data (a Hazelcast cluster restarted empty) gets them back within this, even from a node that no
 * longer runs the job.
 */
const HELD_CHECK_MS = 30_000;
/** Writes tried per job and flush before the rest waits for the next flush. */
const ATTEMPTS = 5;

/** What a write of one job's history settled: the history as it stands, and whether this write landed it. */
export interface HistoryWrite {
  readonly history: JobHistory | undefined;
  readonly landed: boolean;
  /** The job's health turned with this write: it landed, so no other node's write says so. */
  readonly change?: HealthChange;
  /** What this write's slot ledger judged (missed slots, a job with no eligible node): said by this write alone. */
  readonly news?: SlotNews;
}

/** How a write judges the job: its health thresholds and its calendar (the slot ledger), when this node has them. */
export interface HistoryJudge {
  readonly health?: { readonly failureThreshold: number; readonly recoveryThreshold: number };
  readonly calendar?: SlotCalendar;
  /** Instants before `now - settleMs` are settled: a run that started for one was written by then. */
  readonly settleMs: number;
  /** This node's acquirer name, as the ledger's verdicts name their judge. */
  readonly node: string;
  /** Instants of a vacancy settled: write if the ledger judges anything, even with no news. */
  readonly due?: boolean;
}

/** What a write says for the cluster, and the id it stores in `said`: kept when its answer never comes. */
interface Said {
  readonly id: string;
  readonly change?: HealthChange;
  readonly news?: SlotNews;
}

export class HistoryWriter {
  private readonly stored = new Map<string, StoredHistory>();
  /** The history of each job this node last wrote, kept through conflicts: what it writes back if the store lost it. */
  private readonly held = new Map<string, JobHistory>();
  private heldCheckedAt = 0;
  /**
   * What this node's writes said (health turns, slot news) whose answer never came (the write may have landed): said
   * once a later read shows the record carrying its id in `said`, forgotten once it shows another.
   */
  private readonly unanswered = new Map<string, Said>();
  /** What was found lost and written back since {@link takeLost} last asked. */
  private lost = { lostSince: -Infinity, restored: new Set<string>() };

  constructor(
    private readonly store: HistoryStore,
    private readonly options: { readonly keep: number; readonly callTimeoutMs: number; readonly clock: { now(): number } },
  ) {}

  /** The history of `job` as this node last wrote or read it, if it remembers one. */
  cached(job: string): JobHistory | undefined {
    return this.stored.get(job)?.history;
  }

  /** Since when `job` is known to the cluster: see `HistoryRecorder.knownSince`. */
  async knownSince(job: string): Promise<number | undefined> {
    let stored = this.stored.get(job);
    if (!stored) {
      try {
        stored = await this.store.read(job, this.options.callTimeoutMs);
      } catch {
        return -Infinity;
      }
    }
    if (!stored) return undefined;
    return stored.history.createdAt ?? -Infinity;
  }

  /**
   * Merges `delta` (or the delta `deltaOf` makes of the history as read) into `job`'s stored history (and, with `check`, writes back its history if the store lost it, even
   * with no news). Throws when every attempt lost or the store failed; the caller keeps its news for the next flush.
   */
  async write(
    job: string,
    deltaOf: HistoryDelta | ((current: JobHistory | undefined) => HistoryDelta),
    check: boolean,
    judge?: HistoryJudge,
  ): Promise<HistoryWrite> {
    const first = typeof deltaOf === 'function' ? deltaOf(undefined) : deltaOf;
    const news = first.runs.length > 0 || (first.slots?.length ?? 0) > 0 || first.dropped !== undefined;
    const slot = new HistorySlot(this.store, job, this.options.callTimeoutMs);
    /** What the last decision's write would say, if anything: kept if its answer never comes. */
    let attempted: Said | undefined;
    /** What an earlier write said that a read now shows landed: said with this write's outcome. */
    let landedEarlier: Said | undefined;
    const earlier = this.unanswered.get(job);
    try {
      const { history, lostAt, said } = await readDecideWrite<StoredHistory | null, JobHistory, { history?: JobHistory; lostAt?: number; said?: Said }>(`the history of "${job}"`, slot, async (expected) => {
        // The store has it older than this node last wrote it (or not at all): lost with the store's data, or removed.
        if (earlier && expected !== null) {
          // Did the write whose answer never came land? Its id on the record says so; any other, it did not.
          this.unanswered.delete(job);
          if (expected.history.said === earlier.id) landedEarlier = earlier;
        }
        const held = this.held.get(job);
        const cached = expected !== null && expected === this.stored.get(job);
        const behind = held !== undefined && !cached && madeAnew(expected?.history, held);
        const lostAt = behind ? await this.store.lostSince?.(job, this.options.callTimeoutMs) : undefined;
        const now = this.options.clock.now();
        const base = lostAt === undefined ? expected?.history : restoreHistory(held!, expected?.history, this.options.keep, now);
        if (lostAt === undefined && behind && expected === null) this.held.delete(job); // removed (a schedule's end), not lost
        if (check && lostAt === undefined && !news) return { result: { history: expected?.history } };
        const delta = typeof deltaOf === 'function' ? deltaOf(base) : deltaOf;
        const merged: JobHistory = { ...mergeHistory(base, delta, this.options.keep, now), job };
        const id = randomUUID();
        const ledger = judge?.calendar
          ? judgeSlots(base, merged, delta.slots ?? [], judge.calendar, now - judge.settleMs, judge.node)
          : { history: merged, news: {} };
        if (!news && !check && lostAt === undefined && ledger.history.judgedThrough === base?.judgedThrough) return { result: { history: expected?.history } };
        const judged = judge?.health ? judgeHealth(ledger.history, judge.health, this.options.keep, () => ({ id, at: now })) : { history: ledger.history };
        const saying = judged.change !== undefined || Object.keys(ledger.news).length > 0;
        attempted = saying ? { id, ...(judged.change && { change: judged.change }), ...(Object.keys(ledger.news).length > 0 && { news: ledger.news }) } : undefined;
        return { result: { ...(lostAt !== undefined && { lostAt }), ...(attempted && { said: attempted }) }, write: saying ? { ...judged.history, said: id } : judged.history };
      }, {
        attempts: ATTEMPTS,
        ...(this.stored.has(job) && { known: this.stored.get(job) }),
        // Another node wrote first (or the record is gone): read what is there and merge again.
        learned: () => {
          this.stored.delete(job);
          return undefined;
        },
      });
      const written = slot.landed;
      if (!written) return { history, landed: false, ...told(landedEarlier) };
      this.stored.set(job, written);
      this.held.set(job, written.history);
      if (lostAt !== undefined) {
        this.lost.lostSince = Math.max(this.lost.lostSince, lostAt);
        this.lost.restored.add(job);
      }
      return { history: written.history, landed: true, ...told(said, landedEarlier) };
    } catch (error) {
      this.stored.delete(job);
      // This write may have landed with what it said: the next read of the record tells (and says it then, once).
      if (attempted) this.unanswered.set(job, attempted);
      else if (landedEarlier) this.unanswered.set(job, landedEarlier);
      throw error;
    }
  }

  /**
   * Every `HELD_CHECK_MS`, reads the histories this node last wrote and has `writeBack` write, through the usual
   * write, any the store no longer has at that revision (absent, or younger) when it says it may have lost them.
   */
  async checkHeld(writeBack: (job: string) => Promise<unknown>): Promise<void> {
    const now = this.options.clock.now();
    if (this.held.size === 0 || now - this.heldCheckedAt < HELD_CHECK_MS) return;
    this.heldCheckedAt = now;
    const jobs = [...this.held.keys()];
    const found = this.store.readMany ? await this.store.readMany(jobs, this.options.callTimeoutMs) : new Map();
    for (const job of jobs) {
      const stored = this.store.readMany ? found.get(job) : await this.store.read(job, this.options.callTimeoutMs);
      if (!madeAnew(stored?.history, this.held.get(job)!)) continue;
      this.stored.delete(job);
      await writeBack(job);
    }
  }

  /** What was found lost and written back since the last call (told once per flush), and starts over. */
  takeLost(): { readonly lostSince: number; readonly restored: readonly string[] } | undefined {
    const { lostSince, restored } = this.lost;
    this.lost = { lostSince: -Infinity, restored: new Set() };
    return restored.size > 0 ? { lostSince, restored: [...restored].sort() } : undefined;
  }
}

/** What a write tells its caller it said: its own, and an earlier one's that a read showed landed (both, merged). */
function told(...said: (Said | undefined)[]): Pick<HistoryWrite, 'change' | 'news'> {
  let change: HealthChange | undefined;
  let missed: SlotNews['missed'];
  let noEligibleNode: SlotNews['noEligibleNode'];
  for (const one of said) {
    if (!one) continue;
    change ??= one.change;
    const m = one.news?.missed;
    if (m) missed = missed ? { instants: [...missed.instants, ...m.instants], count: missed.count + m.count } : m;
    noEligibleNode ??= one.news?.noEligibleNode;
  }
  const news: SlotNews = { ...(missed && { missed }), ...(noEligibleNode && { noEligibleNode }) };
  return { ...(change && { change }), ...(Object.keys(news).length > 0 && { news }) };
}

/**
 * A job's history as a slot of the one read-decide-write (`readDecideWrite`): `null` is an absent history. Every
 * call has the recorder's call deadline. A write whose answer was lost landed when the history read back is exactly
 * the text written (it carries this node's runs). {@link HistorySlot.landed} keeps what the write that landed stored.
 */
export class HistorySlot implements RecordSlot<StoredHistory | null, JobHistory> {
  /** The history as the last write that landed stored it (from its answer, or from the read that settled it). */
  landed?: StoredHistory;

  constructor(
    /** The history store, or the one in the application's transaction. */
    private readonly store: Pick<HistoryStore, 'read' | 'write'>,
    private readonly job: string,
    private readonly timeoutMs: number,
  ) {}

  async read(): Promise<StoredHistory | null> {
    return (await this.store.read(this.job, this.timeoutMs)) ?? null;
  }

  async write(read: StoredHistory | null, next: JobHistory): Promise<boolean> {
    this.landed = await this.store.write(this.job, read ?? undefined, next, this.timeoutMs);
    return this.landed !== undefined;
  }

  holds(back: StoredHistory | null, next: JobHistory): boolean {
    if (back?.raw !== encodeHistory(next)) return false;
    this.landed = back;
    return true;
  }
}
