import { SplitBrainProtectionError } from './hazelcast-client.load';
import { CorruptStateError } from '../../core/errors/corrupt-state.error';
import { QuorumLostError } from '../../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { withDeadline } from '../../core/with-deadline';
import type { StoreCallObservers } from '../../store/store-call-observers';

/**
 * The one home of a Hazelcast store call: its deadline, and how its failures become the library's errors. Callers
 * fail closed on every {@link StoreUnavailableError}, so no client failure may escape as anything else: this rule is
 * the safety net under every decision, and each store used to carry its own copy of it.
 */

/** A call to the cluster with its deadline and mapping already decided by the caller (given to helpers such as the canaries). */
export type ClusterCall = <T>(operation: () => Promise<T>) => Promise<T>;

/**
 * What a failed store call throws, from what the client threw (`what` names the operation):
 * - a {@link StoreUnavailableError} (so also {@link StoreTimeoutError}, {@link QuorumLostError}) stays as it is;
 * - the members' split-brain protection refusal becomes {@link QuorumLostError} (a held permit is let go);
 * - a {@link CorruptStateError} stays as it is: it names an unreadable value, not an outage;
 * - an error named `StoreTimeoutError` or `QuorumLostError` that is not one of ours (another copy of this library
 *   in the process) becomes ours, so `instanceof` checks still fail closed;
 * - anything else becomes {@link StoreUnavailableError}, with the failure as `cause`.
 */
export function storeFailure(error: unknown, what: string): Error {
  if (error instanceof StoreUnavailableError || error instanceof CorruptStateError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof SplitBrainProtectionError) {
    return new QuorumLostError(`${what}: the members' split-brain protection is not met (${message})`, { cause: error });
  }
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'StoreTimeoutError') return new StoreTimeoutError(message, { cause: error });
  if (name === 'QuorumLostError') return new QuorumLostError(message, { cause: error });
  return new StoreUnavailableError(`Hazelcast call failed (${what}): ${message}`, { cause: error });
}

/**
 * Runs `operation` with the deadline `timeoutMs` (none when undefined) and maps its failure by {@link storeFailure}:
 * for calls made outside a store, on a client of their own (declaring a cluster new).
 */
export async function callWithDeadline<T>(operation: () => Promise<T>, timeoutMs: number | undefined, what: string): Promise<T> {
  try {
    return await withDeadline(operation(), timeoutMs, what);
  } catch (error) {
    throw storeFailure(error, what);
  }
}

/**
 * The calls one store makes on its connection: each with a deadline (the caller's, else the store's default),
 * failures mapped by {@link storeFailure}, and counted for `operationCount()`. Record-map calls are timed for metrics
 * above the backend (`ObservedRecordMap`); a native store's calls, which no record map carries, are reported to the
 * `observers` given.
 */
export class StoreCalls {
  private operations = 0;

  constructor(
    /** Deadline of a call given none, in ms. */
    private readonly defaultTimeoutMs: number,
    /** Where a native store reports its calls (under `tasks`); none for the backend's record maps. */
    private readonly observers?: StoreCallObservers,
  ) {}

  /** Runs one call; `what` names it in errors (`read "billing"`). */
  run<T>(operation: () => Promise<T>, what: string, timeoutMs?: number): Promise<T> {
    this.operations++;
    // Not async: every store call passes here, and a layer of promise and awaits per call shows in a tick's CPU.
    const startedMs = this.observers?.heard ? performance.now() : undefined;
    let pending: Promise<T>;
    try {
      pending = withDeadline(operation(), timeoutMs ?? this.defaultTimeoutMs, what);
    } catch (error) {
      pending = Promise.reject(error as Error);
    }
    const mapped = pending.catch((error: unknown) => {
      throw storeFailure(error, what);
    });
    return startedMs === undefined ? mapped : this.observers!.track('tasks', startedMs, mapped);
  }

  /** How many calls were started, for tests that prove a steady state makes none. */
  count(): number {
    return this.operations;
  }
}
