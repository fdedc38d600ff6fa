import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../core/clock';
import { durationOverSkewProblem } from '../permits/definition.validator';
import { Deadline } from '../core/deadline';
import { WriteConflictError } from '../core/errors/write-conflict.error';
import { readDecideWrite } from '../store/read-decide-write';
import { scheduleSlot } from './schedule-slot';
import type { SqlTransaction } from '../store/sql-transaction';
import type { CronValidator, ScheduleDefinitionInput } from './schedule-definition';
import { validateScheduleDefinition, validateScheduleId } from './schedule-definition.validator';
import { isLive, type LiveScheduleRecord, type ScheduleRecord } from './schedule-record';
import { decidePaused, decideRemove, decideUpsert, type ScheduleDecision, type ScheduleOutcome, type ScheduleWriteContext } from './schedule.rules';
import type { ScheduleStore, VersionedSchedule } from './schedule-store';
import { EditConflictError } from '../core/errors/edit-conflict.error';
import { invalidSchedule } from './errors/schedule.errors';

/** How a catalog writes. */
export interface ScheduleCatalogOptions {
  /** Who writes: this node's acquirer name, recorded as each change's `updatedBy`. */
  readonly by: string;
  /** Where time is read (`updatedAt`, a new id's first revision). Default: the system clock. */
  readonly clock?: Clock;
  /** Checks cron expressions with the runner's cron package; without it only their shape is checked. */
  readonly validateCron?: CronValidator;
  /** Deadline of one change or read, all attempts included, in ms. Default 10 s. */
  readonly timeoutMs?: number;
  /** Compare-and-set attempts of one change before it is refused with {@link EditConflictError}. Default 32. */
  readonly maxAttempts?: number;
  /** The clock-skew bound between nodes, in ms (a new id's first revision starts above it). Default 0. */
  readonly skewMs?: number;
}

/** Options of one change. */
export interface ScheduleEditOptions {
  /**
   * The revision of the live schedule this change is based on (`0`: it must not exist), as an operator read it:
   * the change is refused with {@link EditConflictError} when the schedule has moved on meanwhile.
   */
  readonly expectedRevision?: number;
  /**
   * Your own database transaction, through an executor of `nestjs-gatekeeper/fencing` (PostgreSQL backend, the
   * database it uses): the change commits with your rows or not at all, and nodes hear of it once it commits.
   */
  readonly transaction?: SqlTransaction;
}

/** What a change did. */
export interface ScheduleChangeResult {
  /** The schedule's id. */
  readonly id: string;
  /** `created`, `updated` (a new definition, paused or resumed), `removed`, or `unchanged` (nothing was written). */
  readonly outcome: ScheduleOutcome;
  /** The schedule's revision after the change (0: it never existed). */
  readonly revision: number;
  /** The schedule as stored after the change; `undefined` once removed (or never defined). */
  readonly schedule?: LiveScheduleRecord;
}

/**
 * Registers, changes, pauses and removes runtime schedules in the cluster. Every change is a compare-and-set
 * loop on the schedule's record: read, decide (pure rules), write against the exact value read, and on conflict
 * read and decide again, so concurrent changes are all applied in some order, none lost and none doubled; an
 * upsert equal to what is stored writes nothing. A write whose answer was lost is settled by reading it back (the
 * library's one rule, `readDecideWrite`), and any read that finds the operation's nonce in the record (a late write
 * of an earlier attempt) means that attempt landed. Every node's view hears the write from the map's feed.
 */
export class ScheduleCatalog {
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;

  constructor(
    private readonly store: ScheduleStore,
    private readonly options: ScheduleCatalogOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxAttempts = options.maxAttempts ?? 32;
  }

  /** Creates the schedule or replaces its definition (validated first: an {@link InvalidInputError} names the field). */
  upsert(input: ScheduleDefinitionInput, options: ScheduleEditOptions = {}): Promise<ScheduleChangeResult> {
    const definition = validateScheduleDefinition(input, { validateCron: this.options.validateCron });
    // Its semaphore is defined with this duration on every node: refused here, before the write, rather than there.
    const tooShort = durationOverSkewProblem(definition.durationMs, this.options.skewMs ?? 0);
    if (tooShort) throw invalidSchedule(definition.id, 'duration', tooShort.replace(', or force it', ''));
    const expectedRevision = validateExpected(definition.id, options.expectedRevision);
    return this.change(definition.id, (current, context) => decideUpsert(current, definition, { ...context, expectedRevision }), options.transaction);
  }

  /** Pauses a live schedule (it fires nowhere until resumed); `NotFoundError` when there is none. */
  pause(id: string, options: ScheduleEditOptions = {}): Promise<ScheduleChangeResult> {
    return this.setPaused(id, true, options);
  }

  /** Resumes a paused schedule; `NotFoundError` when there is none. */
  resume(id: string, options: ScheduleEditOptions = {}): Promise<ScheduleChangeResult> {
    return this.setPaused(id, false, options);
  }

  /** Removes a schedule (its record stays as a tombstone, so its revision keeps growing if the id comes back). */
  remove(id: string, options: ScheduleEditOptions = {}): Promise<ScheduleChangeResult> {
    const checked = validateScheduleId(id);
    const expectedRevision = validateExpected(checked, options.expectedRevision);
    return this.change(checked, (current, context) => decideRemove(current, checked, { ...context, expectedRevision }), options.transaction);
  }

  /** The live schedule of this id, read from the store, or `undefined`. */
  async get(id: string): Promise<LiveScheduleRecord | undefined> {
    const read = await this.store.read(validateScheduleId(id), { timeoutMs: this.timeoutMs });
    return isLive(read.record) ? read.record : undefined;
  }

  /** Every live schedule, read from the store, sorted by id. */
  async list(): Promise<LiveScheduleRecord[]> {
    const listed = await this.store.list({ timeoutMs: this.timeoutMs });
    return listed.map((v) => v.record).filter(isLive);
  }

  /** The store's reads and writes in `transaction`, or why a change cannot be written there. */
  private inTransaction(id: string, transaction: SqlTransaction): Pick<ScheduleStore, 'read' | 'compareAndSet'> {
    if (!this.store.inTransaction) throw invalidSchedule(id, 'transaction', 'a runtime schedule is written in your transaction on the PostgreSQL backend only');
    return this.store.inTransaction(transaction);
  }

  private setPaused(id: string, paused: boolean, options: ScheduleEditOptions): Promise<ScheduleChangeResult> {
    const checked = validateScheduleId(id);
    const expectedRevision = validateExpected(checked, options.expectedRevision);
    return this.change(checked, (current, context) => decidePaused(current, checked, paused, { ...context, expectedRevision }), options.transaction);
  }

  /** The read-decide-write every change runs in (in the application's transaction when given one). */
  private async change(id: string, decide: (current: ScheduleRecord | undefined, context: ScheduleWriteContext) => ScheduleDecision, transaction?: SqlTransaction): Promise<ScheduleChangeResult> {
    const store = transaction === undefined ? this.store : this.inTransaction(id, transaction);
    const deadline = new Deadline(this.timeoutMs, `Schedule "${id}": change`);
    const writeId = randomUUID();
    const context = (): ScheduleWriteContext => ({ now: this.clock.now(), by: this.options.by, writeId, skewMs: this.options.skewMs });
    /** What each attempt decided, by the revision it wrote: a late write of an earlier attempt may be the one that landed. */
    const tried = new Map<number, ScheduleDecision>();
    let changed: Changed;
    try {
      changed = await readDecideWrite<VersionedSchedule, ScheduleRecord, Changed>(`schedule "${id}"`, scheduleSlot(store, id), ({ record }) => {
        // Our nonce in it: one of our attempts landed after all (the only one that can: each replaced what it read).
        const landed = record?.writeId === writeId ? tried.get(record.revision) : undefined;
        if (landed) return { result: { decision: landed, record, written: true } };
        const decision = decide(record, context());
        if (!decision.write) return { result: { decision, record, written: false } };
        tried.set(decision.write.revision, decision);
        return { result: { decision, record: decision.write, written: true }, write: decision.write };
      }, { attempts: this.maxAttempts, deadline });
    } catch (error) {
      if (error instanceof WriteConflictError) throw new EditConflictError('schedule', id, this.maxAttempts);
      throw error;
    }
    const { decision, record, written } = changed;
    return result(id, decision.outcome, written ? record!.revision : decision.revision, record);
  }
}

/** What a change came to: its decision, the record after it, and whether it wrote that record. */
interface Changed {
  readonly decision: ScheduleDecision;
  readonly record: ScheduleRecord | undefined;
  readonly written: boolean;
}

function result(id: string, outcome: ScheduleOutcome, revision: number, record: ScheduleRecord | undefined): ScheduleChangeResult {
  return { id, outcome, revision, ...(isLive(record) && { schedule: record }) };
}

function validateExpected(id: string, expected: unknown): number | undefined {
  if (expected === undefined) return undefined;
  if (typeof expected !== 'number' || !Number.isSafeInteger(expected) || expected < 0) {
    throw invalidSchedule(id, 'expectedRevision', `must be a whole number, 0 or more, got ${JSON.stringify(expected) ?? String(expected)}`);
  }
  return expected;
}
