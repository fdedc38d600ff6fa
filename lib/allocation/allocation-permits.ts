import type { AcquireResult } from '../permits/acquire-result';
import type { Permit } from '../permits/permit';
import type { PermitEngine } from '../permits/permit.engine';
import type { AmendInput, AmendResult, Amendment } from '../permits/permit-amendment';
import type { DecideOptions } from '../permits/permit-engine.options';
import type { PermitStore } from '../permits/permit-store';
import type { SemaphoreEntry } from '../permits/semaphore-entry';

/** What a participant needs of the permit layer (a `PermitEngine` and its store: see {@link allocationPermitsOf}). */
export interface AllocationPermits {
  /** Grants this node's permit (or answers from the view that it already holds one). */
  acquire(semaphore: string): Promise<AcquireResult>;
  /** Refreshes the permit and applies a change in one compare-and-set; never withdraws it (see `PermitEngine.amend`). */
  amend<T>(permit: Permit, change: (input: AmendInput) => Amendment<T>, options?: DecideOptions): Promise<AmendResult<T>>;
  /** Releases the permit; with `notBefore` ahead it is kept (released) until then, its resources reserved. Never throws. */
  release(permit: Permit, notBefore?: number): Promise<void>;
  /** Calls `onLost` when the node learns the permit no longer holds; nothing withdraws it meanwhile. */
  watch(permit: Permit, onLost: (reason: string) => void): () => void;
  /** The node's view of the semaphore's entry. */
  peek(semaphore: string): SemaphoreEntry | undefined;
  /** Calls `listener` whenever the view of the semaphore's entry changes; returns the unsubscribe. */
  watchEntry(semaphore: string, listener: () => void): () => void;
}

/** The calls a participant makes of the permit layer: a `PermitEngine`'s, or the Nest runtime's over it. */
export type AllocationCalls = Pick<PermitEngine, 'amend' | 'watch'> & {
  tryAcquire(semaphore: string, options: DecideOptions): Promise<AcquireResult>;
  release(permit: Permit, notBefore?: number): Promise<unknown>;
};

/** The {@link AllocationPermits} of a `PermitEngine` (or calls like its) on its store. */
export function allocationPermitsOf(engine: AllocationCalls, store: Pick<PermitStore, 'peek' | 'watch'>): AllocationPermits {
  return {
    acquire: (semaphore) => engine.tryAcquire(semaphore, { local: true }),
    amend: (permit, change, options) => engine.amend(permit, change, options),
    release: async (permit, notBefore) => {
      await engine.release(permit, notBefore).catch(() => undefined);
    },
    watch: (permit, onLost) => engine.watch(permit, onLost, { withdraw: false }),
    peek: (semaphore) => store.peek(semaphore)?.entry,
    watchEntry: (semaphore, listener) => store.watch((name) => {
      if (name === semaphore) listener();
    }, (name) => name === semaphore),
  };
}
