import { randomUUID } from 'node:crypto';
import type { SemaphoreEntry } from './semaphore-entry';
import type { PermitStore, VersionedEntry } from './permit-store';
import type { ObservedEntry } from './semaphore.view';
import type { Deadline } from '../core/deadline';
import { WriteConflictError } from '../core/errors/write-conflict.error';
import { CONFLICT } from '../store/compare-and-set';
import { readDecideWrite, type RecordSlot } from '../store/read-decide-write';

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
 * read-decide-write (`readDecideWrite`: read the entry, decide, compare-and-set, and on conflict read and decide
 * again, within its bounded loop). The first attempt may start from `known` (this node's view), saving the read: if
 * it was stale the write fails and the loop reads. A result that writes nothing is only returned from an entry read
 * in this loop, unless `trust` accepts the view's. Returns `undefined` when every attempt lost a race. Every store
 * call gets what is left of `deadline` (and throws `StoreTimeoutError` when nothing is); a result from the trusted
 * view needs no time. A lost answer is settled by the store itself (`PermitStore.compareAndSet`), not here.
 */
export function compareAndSetLoop<R>(
  store: PermitStore,
  name: string,
  decide: (read: VersionedEntry) => Attempt<R> | Promise<Attempt<R>>,
  { maxAttempts, deadline, known, trust = () => false }: LoopOptions,
): Promise<R | undefined> {
  /** The entry decided on when it came from this node's view rather than a read of this loop. */
  let observed: ObservedEntry | undefined = known?.raw === null ? undefined : known;
  /** The attempt being written: the slot sends its `beforeWrite` and `notBefore` along (no object per attempt). */
  let writing: Attempt<R> | undefined;
  const slot: RecordSlot<VersionedEntry, Omit<SemaphoreEntry, 'writeId'>> = {
    read: (call) => {
      observed = undefined;
      return store.read(name, call);
    },
    write: (current, entry, call) => {
      writing?.beforeWrite?.();
      const notBefore = writing?.notBefore;
      return store.compareAndSet(name, current, { ...entry, writeId: store.writeId?.() ?? randomUUID() }, notBefore === undefined ? call : { ...call, notBefore });
    },
  };
  return readDecideWrite(`semaphore "${name}"`, slot, async (current) => {
    const attempt = await decide(current);
    writing = attempt;
    // A result that writes nothing stands on an entry read here, or on the view if `trust` takes it; else read.
    return attempt.write || !observed || trust(observed) ? attempt : CONFLICT;
  }, {
    attempts: maxAttempts,
    deadline,
    ...(observed && { known: observed }),
    // Another writer got in first. Its write may already have reached the view by event (a lost race then costs
    // no read); otherwise read what it wrote. An absence is always read from the store: only a read can say
    // whether an absent entry may have been lost (and so must be rebuilt with a recovery wait).
    learned: (lost) => {
      const seen = store.peek(name);
      observed = seen && seen.raw !== null && seen.raw !== lost.raw ? seen : undefined;
      return observed;
    },
  }).catch((error: unknown) => {
    if (error instanceof WriteConflictError) return undefined;
    throw error;
  });
}
