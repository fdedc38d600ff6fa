import { randomUUID } from 'node:crypto';
import type { SemaphoreEntry } from './semaphore-entry';
import type { PermitStore, VersionedEntry } from './permit-store';
import type { ObservedEntry } from './semaphore.view';
import type { Deadline } from '../core/deadline';
import { WriteConflictError } from '../core/errors/write-conflict.error';
import { CONFLICT, retryOnConflict } from '../store/compare-and-set';

/** What one attempt decided: the result, and the entry to write for it (nothing to write: the result stands). */
export interface Attempt<R> {
  readonly result: R;
  /** The entry to write, without `writeId` (added here: the store's, else a random UUID). Its revision must be the read one plus one. */
  readonly write?: Omit<SemaphoreEntry, 'writeId'>;
  /** Called right before the write is sent (e.g. to tell a holder whose permit the write withdraws). */
  readonly beforeWrite?: () => void;
  /** The store's clock must have reached this for the write to land (see `lapsedOnStoreBy`); a refusal is a conflict. */
  readonly notBefore?: number;
}

/** How the loop runs. */
export interface LoopOptions {
  /** Attempts before giving up. */
  maxAttempts: number;
  /** The decision's deadline; every store call gets what is left of it. */
  deadline: Deadline;
  /** What this node already knows of the entry, to try the first write against without reading. */
  known?: ObservedEntry;
  /** Whether a result that writes nothing may stand on what this node knew (young enough), without a read. */
  trust?: (known: ObservedEntry) => boolean;
}

/**
 * The permits' read-decide-compare-and-set (permit decisions and operator edits alike), run in the library's one
 * bounded loop ({@link retryOnConflict}): read the entry, decide, compare-and-set, and on conflict read and decide
 * again. The first attempt may start from `known` (this node's view), saving the read: if it was stale the write fails
 * and the loop reads. A result that writes nothing is only returned from an entry read in this loop, unless `trust`
 * accepts the view's. Returns `undefined` when every attempt lost a race. Every store call gets what is left of
 * `deadline` (and throws `StoreTimeoutError` when nothing is); a result from the trusted view needs no time.
 */
export function compareAndSetLoop<R>(
  store: PermitStore,
  name: string,
  decide: (read: VersionedEntry) => Attempt<R> | Promise<Attempt<R>>,
  { maxAttempts, deadline, known, trust = () => false }: LoopOptions,
): Promise<R | undefined> {
  let observed: ObservedEntry | undefined = known?.raw === null ? undefined : known;
  let read: VersionedEntry | undefined = observed;
  return retryOnConflict(`semaphore "${name}"`, async () => {
    if (!read) {
      read = await store.read(name, { timeoutMs: deadline.left() });
      observed = undefined;
    }
    const current = read;
    const decision = await decide(current);
    if (!decision.write) {
      if (!observed || trust(observed)) return decision.result;
      read = undefined;
      return CONFLICT;
    }
    decision.beforeWrite?.();
    const options = { timeoutMs: deadline.left(), ...(decision.notBefore !== undefined && { notBefore: decision.notBefore }) };
    if (await store.compareAndSet(name, current, { ...decision.write, writeId: store.writeId?.() ?? randomUUID() }, options)) {
      return decision.result;
    }
    // Another writer got in first. Its write may already have reached the view by event (a lost race then costs
    // no read); otherwise read what it wrote. An absence is always read from the store: only a read can say
    // whether an absent entry may have been lost (and so must be rebuilt with a recovery wait).
    const seen = store.peek(name);
    observed = seen && seen.raw !== null && seen.raw !== current.raw ? seen : undefined;
    read = observed;
    return CONFLICT;
  }, { attempts: maxAttempts, deadline }).catch((error: unknown) => {
    if (error instanceof WriteConflictError) return undefined;
    throw error;
  });
}
