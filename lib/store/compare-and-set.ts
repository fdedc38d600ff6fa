import { WriteConflictError } from '../core/errors/write-conflict.error';
import type { Deadline } from '../core/deadline';
import type { RecordMap, RecordWriteOptions, StoredRecord } from './record-map';
import { settleWrite } from './settle-write';

/** How many attempts a compare-and-set loop makes unless told otherwise: enough for a hot record under a dozen writers. */
export const DEFAULT_ATTEMPTS = 16;

/** What an attempt of {@link retryOnConflict} returns to be tried again (it lost a race). */
export const CONFLICT: unique symbol = Symbol('conflict');

/** Bounds of a compare-and-set loop. */
export interface ConflictBounds {
  /** Attempts before giving up with `WriteConflictError`. Default {@link DEFAULT_ATTEMPTS}. */
  readonly attempts?: number;
  /** The deadline of the whole loop: checked before each attempt (`Deadline.left()` throws `StoreTimeoutError`). */
  readonly deadline?: Deadline;
  /**
   * The longest wait between two attempts, in ms: after the `n`-th conflict in a row an attempt waits a random time
   * up to `min(backoffMs, 2^(n-1))` ms (the first retry goes at once), so writers that keep colliding on one hot
   * record spread out instead of losing in lockstep. Never waits past `deadline`. Default {@link DEFAULT_BACKOFF_MS};
   * `0`: no wait.
   */
  readonly backoffMs?: number;
}

/** The longest wait between two attempts of a compare-and-set loop unless told otherwise, in ms. */
export const DEFAULT_BACKOFF_MS = 64;

/**
 * The one bounded loop of the library: runs `attempt` until it returns anything but {@link CONFLICT}, at most
 * `attempts` times and never past `deadline`; throws `WriteConflictError` naming `what` when every attempt lost. Every
 * read-decide-write of a capability runs in it (or in {@link updateRecord}, built on it), so none can spin for ever
 * under contention or against a store that keeps refusing.
 */
export async function retryOnConflict<R>(
  what: string,
  attempt: (index: number) => Promise<R | typeof CONFLICT>,
  { attempts = DEFAULT_ATTEMPTS, deadline, backoffMs = DEFAULT_BACKOFF_MS }: ConflictBounds = {},
): Promise<R> {
  for (let index = 0; index < attempts; index++) {
    if (index > 1 && backoffMs > 0) await backOff(Math.min(backoffMs, 2 ** (index - 2)), deadline);
    deadline?.left();
    const result = await attempt(index);
    if (result !== CONFLICT) return result;
  }
  throw new WriteConflictError(what, attempts);
}

/** Waits a random time up to `maxMs` (full jitter), and never past `deadline`. */
function backOff(maxMs: number, deadline: Deadline | undefined): Promise<void> {
  const left = deadline ? deadline.left() : Infinity;
  const ms = Math.min(Math.random() * maxMs, Math.max(0, left - 1));
  // Not unref'd: the loop is work under way, which a process (or a test runner) must wait for.
  return ms >= 1 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

/** What one decision of {@link updateRecord} wants done. */
export interface RecordDecision<R> {
  /** What the update returns once the write (if any) landed. */
  readonly result: R;
  /**
   * The record's next value: a string writes it (creating the record if it was absent), `null` removes it, absent
   * (`undefined`) writes nothing and `result` stands.
   */
  readonly write?: string | null;
}

/** Options of {@link updateRecord}. */
export interface UpdateOptions extends ConflictBounds {
  /** What this node already knows of the record (`null`: known absent), to try the first write without reading. */
  readonly known?: StoredRecord | null;
  /** Options of each write (its TTL). The timeout of every call is what is left of `deadline` when there is one. */
  readonly write?: Omit<RecordWriteOptions, 'timeoutMs'>;
}

/**
 * Read, decide, compare-and-set, and on conflict read and decide again, within {@link ConflictBounds}. A write whose
 * answer was lost is settled by reading it back ({@link settleWrite}): if it landed, its result stands; if not, the
 * loop decides again on what it read. `decide` is called again on every attempt, with the record as it is now.
 */
export async function updateRecord<R>(
  map: RecordMap,
  key: string,
  decide: (current: StoredRecord | undefined) => RecordDecision<R> | Promise<RecordDecision<R>>,
  options: UpdateOptions = {},
): Promise<R> {
  const { deadline } = options;
  const timeout = () => (deadline ? { timeoutMs: deadline.left() } : {});
  let known: StoredRecord | null | undefined = options.known;
  return retryOnConflict(`update ${map.name} "${key}"`, async () => {
    const current = known !== undefined ? (known ?? undefined) : await map.get(key, timeout());
    known = undefined;
    const decision = await decide(current);
    if (decision.write === undefined) return decision.result;
    const write = decision.write;
    const settled = await settleWrite(map, key, write, () => {
      if (write === null) return current ? map.remove(current, timeout()) : Promise.resolve(true);
      return current ? map.replace(current, write, { ...options.write, ...timeout() }) : map.create(key, write, { ...options.write, ...timeout() });
    }, deadline);
    if (settled.written) return decision.result;
    // Lost the race: decide again on what the settle read found, or read.
    known = settled.read;
    return CONFLICT;
  }, options);
}
