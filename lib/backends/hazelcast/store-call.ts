import { SplitBrainProtectionError } from 'hazelcast-client';
import { CorruptStateError } from '../../core/errors/corrupt-state.error';
import { QuorumLostError } from '../../core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { withDeadline } from '../../core/with-deadline';

/**
 * The one home of a Hazelcast store call: its deadline, and how its failures become the library's errors. Callers
 * fail closed on every {@link StoreUnavailableError}, so no client failure may escape as anything else: this rule is
 * the safety net under every decision, and each store used to carry its own copy of it.
 */

/** The store a call belongs to (the `store` label of its metrics). */
export type StoreName = 'permits' | 'presence' | 'tasks' | 'schedules';

/** A call to the cluster with its deadline and mapping already decided by the caller (given to helpers such as the canaries). */
export type ClusterCall = <T>(operation: () => Promise<T>) => Promise<T>;

/** What {@link StoreCalls} needs of a connection: it starts every call through the connection's `timed()`, which times it for metrics. */
export interface TimedCalls {
  timed<T>(store: StoreName, operation: () => Promise<T>, timeoutMs: number | undefined, what: string): Promise<T>;
}

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
 * The calls one store makes on its connection: each with a deadline (the caller's, else the store's default), timed
 * through the connection for metrics, failures mapped by {@link storeFailure}, and counted for `operationCount()`.
 */
export class StoreCalls {
  private operations = 0;

  constructor(
    private readonly connection: TimedCalls,
    private readonly store: StoreName,
    /** Deadline of a call given none, in ms. */
    private readonly defaultTimeoutMs: number,
  ) {}

  /** Runs one call; `what` names it in errors (`read "billing"`). */
  run<T>(operation: () => Promise<T>, what: string, timeoutMs?: number): Promise<T> {
    this.operations++;
    // Not async: every store call passes here, and a layer of promise and awaits per call shows in a tick's CPU.
    let pending: Promise<T>;
    try {
      pending = this.connection.timed(this.store, operation, timeoutMs ?? this.defaultTimeoutMs, what);
    } catch (error) {
      return Promise.reject(storeFailure(error, what));
    }
    return pending.catch((error: unknown) => {
      throw storeFailure(error, what);
    });
  }

  /** How many calls were started, for tests that prove a steady state makes none. */
  count(): number {
    return this.operations;
  }
}
