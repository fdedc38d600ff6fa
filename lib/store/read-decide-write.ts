import type { Deadline } from '../core/deadline';
import { CONFLICT, retryOnConflict, type ConflictBounds } from './compare-and-set';
import type { RecordCallOptions, RecordMap, RecordWriteOptions, StoredRecord } from './record-map';
import { isUnknownOutcome } from './unknown-outcome';

/**
 * One record a read-decide-write works on, in whichever store keeps it: a record map's entry ({@link mapSlot}), a
 * task or a group's record of a `TaskStore`, a semaphore's entry of a `PermitStore`, a schedule. `S` is the record
 * as read, carrying what a write is checked against (its exact stored text, its revision); never `undefined` (say an
 * absence inside it). `W` is what a decision writes.
 */
export interface RecordSlot<S, W> {
  /** Reads the record as it is now. */
  read(call: RecordCallOptions): Promise<S>;
  /** Writes `next` only if the record is still as `read` found it; false when it changed since (a lost race). */
  write(read: S, next: W, call: RecordCallOptions): Promise<boolean>;
  /**
   * Whether `back`, read after a write whose answer was lost, shows that write landed: it holds exactly `next` (a
   * value no other writer makes: a unique write id, a claim's epoch) or, for a removal, nothing. Leave it out when
   * the slot's store settles its writes itself (a `PermitStore`): a failed write then fails the loop.
   */
  holds?(back: S, next: W): boolean;
  /** The read that settles a lost answer. Default: {@link RecordSlot.read}. */
  readBack?(call: RecordCallOptions): Promise<S>;
}

/** What one decision of a read-decide-write wants done. */
export interface Decision<R, W> {
  /** What the loop returns once the write (if any) landed. */
  readonly result: R;
  /** What to write; absent (`undefined`): nothing, and `result` stands on what was read. */
  readonly write?: W;
}

/** Bounds and starting knowledge of {@link readDecideWrite}. */
export interface ReadDecideWriteOptions<S> extends ConflictBounds {
  /** What this node already knows of the record, to decide (and try the write) on first without reading. */
  readonly known?: S;
  /**
   * After a lost race against `lost`: what this node has since learned of the record without a read (an event-fed
   * view), to decide on next; `undefined` reads the store. Default: always read.
   */
  readonly learned?: (lost: S) => S | undefined;
}

/**
 * The library's one read-decide-write: read the record (or start from `known`), `decide`, compare-and-set, and on a
 * lost race read and decide again, in the one bounded loop ({@link retryOnConflict}: its attempts, backoff and
 * `deadline`; `WriteConflictError` naming `what` when every attempt lost). Every store call gets what is left of
 * `deadline` (none: the store's own call deadline).
 *
 * A write whose answer was lost ({@link isUnknownOutcome}: the one rule, so never a timeout or a quorum refusal) is
 * settled by reading the record back: if it holds the write ({@link RecordSlot.holds}), the result stands; if not,
 * the loop decides again on what the read found; if the read fails too, the write's error is thrown.
 *
 * `decide` is called on every attempt with the record as it is now (and the attempt's index); it may throw (a
 * refusal), or return {@link CONFLICT} to have the record read from the store and decided on again (a decision made
 * on knowledge it does not trust, a record it created first).
 */
export function readDecideWrite<S, W, R>(
  what: string,
  slot: RecordSlot<S, W>,
  decide: (current: S, attempt: number) => Decision<R, W> | typeof CONFLICT | Promise<Decision<R, W> | typeof CONFLICT>,
  options: ReadDecideWriteOptions<S> = {},
): Promise<R> {
  const { deadline, learned } = options;
  let next: S | undefined = options.known;
  return retryOnConflict(what, async (attempt) => {
    const current = next !== undefined ? next : await slot.read(callOf(deadline));
    next = undefined;
    const decision = await decide(current, attempt);
    if (decision === CONFLICT) return CONFLICT;
    if (decision.write === undefined) return decision.result;
    const write = decision.write;
    try {
      if (await slot.write(current, write, callOf(deadline))) return decision.result;
      next = learned?.(current);
      return CONFLICT;
    } catch (error) {
      if (!slot.holds || !isUnknownOutcome(error)) throw error;
      let back: S;
      try {
        back = await (slot.readBack ?? slot.read).call(slot, callOf(deadline));
      } catch {
        throw error; // still unknown: the write's failure says why
      }
      if (slot.holds(back, write)) return decision.result;
      next = back;
      return CONFLICT;
    }
  }, options);
}

/** A call's options: what is left of the loop's deadline, or nothing (the store's own call deadline). */
function callOf(deadline: Deadline | undefined): RecordCallOptions {
  return deadline ? { timeoutMs: deadline.left() } : {};
}

/**
 * One entry of a record map as a {@link RecordSlot}: read as it is (`null`: absent); a string writes it (creating
 * it if absent), `null` removes it. A value read back settles a lost answer when it is exactly the one written
 * (record values carry a unique write id).
 */
export function mapSlot(map: RecordMap, key: string, write: Omit<RecordWriteOptions, 'timeoutMs'> = {}): RecordSlot<StoredRecord | null, string | null> {
  return {
    read: async (call) => (await map.get(key, call)) ?? null,
    write: async (current, next, call) => {
      if (next === null) return current ? map.remove(current, call) : true;
      return current ? map.replace(current, next, { ...write, ...call }) : map.create(key, next, { ...write, ...call });
    },
    holds: (back, next) => (back?.value ?? null) === next,
  };
}

/** What one decision of {@link updateRecord} wants done: `write` a string, `null` removes, absent writes nothing. */
export type RecordDecision<R> = Decision<R, string | null>;

/** Options of {@link updateRecord}. */
export interface UpdateOptions extends ConflictBounds {
  /** What this node already knows of the record (`null`: known absent), to try the first write without reading. */
  readonly known?: StoredRecord | null;
  /** Options of each write (its TTL). The timeout of every call is what is left of `deadline` when there is one. */
  readonly write?: Omit<RecordWriteOptions, 'timeoutMs'>;
}

/** {@link readDecideWrite} on one entry of a record map ({@link mapSlot}); `decide` sees an absent record as `undefined`. */
export function updateRecord<R>(
  map: RecordMap,
  key: string,
  decide: (current: StoredRecord | undefined) => RecordDecision<R> | Promise<RecordDecision<R>>,
  options: UpdateOptions = {},
): Promise<R> {
  return readDecideWrite(`update ${map.name} "${key}"`, mapSlot(map, key, options.write), (current) => decide(current ?? undefined), options);
}
