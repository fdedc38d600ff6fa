import { WriteConflictError } from '../core/errors/write-conflict.error';
import type { Deadline } from '../core/deadline';

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
 * read-decide-write runs in it (through `readDecideWrite`, built on it), so none can spin for ever under contention
 * or against a store that keeps refusing.
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
