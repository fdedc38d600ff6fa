import { StoreTimeoutError } from '../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import type { Deadline } from '../core/deadline';
import type { RecordMap, StoredRecord } from './record-map';

/** What a settled write came to. */
export interface SettledWrite {
  /** Whether the write is in the store (its exact value is there, or, for a removal, nothing is). */
  readonly written: boolean;
  /** When the write was settled by reading back: what the read found (`null`: absent). */
  readonly read?: StoredRecord | null;
}

/**
 * Runs one compare-and-set `write` of `value` (`null`: a removal) under `key`, and settles an unknown outcome: when
 * the call fails with `StoreUnavailableError` (the connection dropped under it: the write may have landed), the record
 * is read back, and the write counts as landed only if the store holds exactly `value` (a value with a unique write
 * id: nobody else wrote it) or, for a removal, nothing. A `StoreTimeoutError` is not settled here: the store may still
 * apply the write after the read (a stalled member), so the caller fails closed. The one home of "a lost answer is
 * settled by reading back", which permits, schedules and tasks each wrote their own way before.
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
    if (error instanceof StoreTimeoutError || !(error instanceof StoreUnavailableError)) throw error;
    let back: StoredRecord | undefined;
    try {
      back = await map.get(key, deadline ? { timeoutMs: deadline.left() } : {});
    } catch {
      throw error; // still unknown: the first failure says why
    }
    return { written: value === null ? back === undefined : back?.value === value, read: back ?? null };
  }
}
