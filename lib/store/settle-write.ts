import { QuorumLostError } from '../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { Deadline } from '../core/deadline';
import type { RecordMap, StoredRecord } from './record-map';

/**
 * The one rule of the library for a write that failed: is its outcome unknown, so that reading the record back may
 * settle it? Only a `StoreUnavailableError` that is neither of these two:
 * - `StoreTimeoutError`: the store may still apply the write after the read-back (a stalled member, a slow
 *   statement), so a read that does not find it proves nothing; the caller fails closed.
 * - `QuorumLostError`: the members refused the call (split-brain protection): that is an answer, not a lost one,
 *   and this node is on the minority side, whose copy of the record a heal merges away, so a read-back there could
 *   "find" a write that the cluster will not keep. It is rethrown (fail closed: a permit is denied `QUORUM_NOT_MET`).
 *
 * Anything else (the connection dropped under the call) may or may not have landed: a value carrying a unique write
 * id (or, for a removal, an absence) read back says which. Used by every read-decide-write ({@link readDecideWrite}),
 * by the event-fed view's writes (`WatchedRecords.write`) and by {@link settleWrite}.
 */
export function isUnknownOutcome(error: unknown): boolean {
  return error instanceof StoreUnavailableError && !(error instanceof StoreTimeoutError) && !(error instanceof QuorumLostError);
}

/** What a settled write came to. */
export interface SettledWrite {
  /** Whether the write is in the store (its exact value is there, or, for a removal, nothing is). */
  readonly written: boolean;
  /** When the write was settled by reading back: what the read found (`null`: absent). */
  readonly read?: StoredRecord | null;
}

/**
 * Runs one compare-and-set `write` of `value` (`null`: a removal) under `key` of a record map, and settles an
 * unknown outcome ({@link isUnknownOutcome}) by reading the record back: the write counts as landed only if the store
 * holds exactly `value` (a value with a unique write id: nobody else wrote it) or, for a removal, nothing. For a
 * backend's own primitives (a counter's advance); a capability's read-decide-write runs in `readDecideWrite`.
 */
export async function settleWrite(
  map: RecordMap,
  key: string,
  value: string | null,
  write: () => Promise<boolean>,
  deadline?: Deadline,
): Promise<SettledWrite> {
  try {
    return { written: await write() };
  } catch (error) {
    if (!isUnknownOutcome(error)) throw error;
    let back: StoredRecord | undefined;
    try {
      back = await map.get(key, deadline ? { timeoutMs: deadline.left() } : {});
    } catch {
      throw error; // still unknown: the first failure says why
    }
    return { written: value === null ? back === undefined : back?.value === value, read: back ?? null };
  }
}
