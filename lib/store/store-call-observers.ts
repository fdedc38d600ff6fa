import { QuorumLostError } from '../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../core/errors/store-timeout.error';
import type { StoreBackend } from './store-backend';

/**
 * How a store call ended: `ok`; `conflict` (a compare-and-set that found the record changed, or a create that found
 * one); `timeout` (no answer within its deadline: its outcome is unknown); `quorum` (a minority side refused);
 * `unavailable` (any other failure).
 */
export type StoreCallOutcome = 'ok' | 'conflict' | 'timeout' | 'unavailable' | 'quorum';

/** One call a capability made to its backend, as it ended (the `store_call_duration_seconds` metric). */
export interface StoreCall {
  /** The capability whose state it reached: `permits`, `presence`, `tasks` or `schedules` (see {@link storeOfMap}). */
  readonly store: string;
  readonly durationMs: number;
  readonly outcome: StoreCallOutcome;
}

/** Hears calls as they end. */
export type StoreCallListener = (call: StoreCall) => void;

/** The outcome of a call that failed with `error`. */
export function failedCallOutcome(error: unknown): StoreCallOutcome {
  if (error instanceof QuorumLostError) return 'quorum';
  return error instanceof StoreTimeoutError ? 'timeout' : 'unavailable';
}

/** The capability (`store` label) whose state the map `name` holds. */
export function storeOfMap(name: string): string {
  switch (name) {
    case 'semaphores':
    case 'semaphore-keys':
      return 'permits';
    case 'presence':
      return 'presence';
    case 'tasks':
    case 'task-groups':
      return 'tasks';
    default:
      return 'schedules';
  }
}

/**
 * The listeners of one backend's calls. Every backend has one ({@link storeCallsOf}), kept beside it rather than in
 * it, so that a backend (ours or a third party's) measures nothing itself: the record maps capabilities open are
 * wrapped in `ObservedRecordMap`, which reports here, and a backend's native store reports here through
 * {@link StoreCallObservers.track}.
 */
export class StoreCallObservers {
  private readonly listeners = new Set<StoreCallListener>();

  /** Whether anyone listens: when nobody does, calls are not timed at all. */
  get heard(): boolean {
    return this.listeners.size > 0;
  }

  /** Hears every call as it ends; returns the unsubscribe. */
  listen(listener: StoreCallListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * {@link StoreCallObservers.track} while anyone listens, else `pending` as it is: how a native store (one that keeps
   * its state past the record maps) reports its calls. Pass `performance.now()` before the call, as an argument
   * ahead of it.
   */
  report<T>(store: string, startedMs: number, pending: Promise<T>, conflictOn?: T): Promise<T> {
    return this.heard ? this.track(store, startedMs, pending, conflictOn) : pending;
  }

  /**
   * Reports `pending`, a call of `store` started at `startedMs` (`performance.now()`), as it ends; resolves or fails
   * as it does. `conflictOn` is the answer that means the call found the record changed (`false` for a
   * compare-and-set).
   */
  async track<T>(store: string, startedMs: number, pending: Promise<T>, conflictOn?: T): Promise<T> {
    let result: T;
    try {
      result = await pending;
    } catch (error) {
      this.ended(store, startedMs, failedCallOutcome(error));
      throw error;
    }
    this.ended(store, startedMs, conflictOn !== undefined && result === conflictOn ? 'conflict' : 'ok');
    return result;
  }

  private ended(store: string, startedMs: number, outcome: StoreCallOutcome): void {
    const call: StoreCall = { store, durationMs: performance.now() - startedMs, outcome };
    for (const listener of this.listeners) {
      try {
        listener(call);
      } catch {
        // A listener that throws must not turn a call that succeeded into a failure.
      }
    }
  }
}

const callsByBackend = new WeakMap<StoreBackend, StoreCallObservers>();

/** The calls of `backend`: the same {@link StoreCallObservers} for the same backend instance, whoever asks. */
export function storeCallsOf(backend: StoreBackend): StoreCallObservers {
  let calls = callsByBackend.get(backend);
  if (!calls) callsByBackend.set(backend, (calls = new StoreCallObservers()));
  return calls;
}
