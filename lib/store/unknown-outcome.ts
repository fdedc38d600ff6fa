import { QuorumLostError } from '../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';

/**
 * The one rule of the library for a write that failed: is its outcome unknown, so that reading the record back may
 * settle it? Only a `StoreUnavailableError` that is none of these three:
 * - `StoreTimeoutError`: the store may still apply the write after the read-back (a stalled member, a slow
 *   statement), so a read that does not find it proves nothing; the caller fails closed.
 * - `QuorumLostError`: the members refused the call (split-brain protection): that is an answer, not a lost one,
 *   and this node is on the minority side, whose copy of the record a heal merges away, so a read-back there could
 *   "find" a write that the cluster will not keep. It is rethrown (fail closed: a permit is denied `QUORUM_NOT_MET`).
 * - an error the store answered itself ({@link storeAnswered}): the call was not lost, and is rethrown with the
 *   store's words.
 *
 * Anything else (the connection dropped under the call) may or may not have landed: a value carrying a unique write
 * id (or, for a removal, an absence) read back says which. The one home of "a lost answer is settled by reading
 * back", used by every read-decide-write (`readDecideWrite`), by the event-fed view's writes (`WatchedRecords.write`)
 * and by a task claim's single write (`TaskClaims`).
 */
export function isUnknownOutcome(error: unknown): boolean {
  return error instanceof StoreUnavailableError && !(error instanceof StoreTimeoutError) && !(error instanceof QuorumLostError) && !answered.has(error);
}

/** Failures the store answered itself (see {@link storeAnswered}). */
const answered = new WeakSet<Error>();

/**
 * Marks `error` as the store's own answer to the call (Redis's `OOM`, `READONLY`, `NOSCRIPT`, a script's error): the
 * call reached the server and was answered, so its outcome is not lost, and a read-back cannot settle it (a refusal
 * wrote nothing; a script that failed part-way may have written some). {@link isUnknownOutcome} is false for it: a
 * read-decide-write throws it, with the store's words, rather than take the missing write for a lost race and retry
 * until it reports a conflict.
 */
export function storeAnswered<E extends Error>(error: E): E {
  answered.add(error);
  return error;
}
