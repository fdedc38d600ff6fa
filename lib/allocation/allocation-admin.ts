import { Deadline } from '../core/deadline';
import { nameProblem } from '../core/names';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { compareAndSetLoop } from '../permits/compare-and-set.loop';
import type { PermitStore } from '../permits/permit-store';
import { ALLOCATION_SEMAPHORE_PREFIX, allocationSemaphore, MAX_ALLOCATION_NAME_LENGTH } from './allocation';
import { allocationStatus, type AllocationStatus } from './allocation-status';
import type { Clock } from '../core/clock';
import { readAnnex, writeAnnex } from './allocation-annex.codec';
import { unknownAllocation } from './errors/allocation.errors';
import { invalidDefinition } from '../core/errors/input.errors';

/**
 * Asks an allocation's coordinator for a rebalance, from any node (an operator's, the CLI's): one compare-and-set
 * on the allocation's entry that counts the request; the coordinator re-reads the resource set and writes a new
 * plan once the last one is carried out. Throws {@link NotFoundError} when there is no such allocation.
 */
export async function requestRebalance(store: PermitStore, name: string, timeoutMs = 10_000): Promise<void> {
  const semaphore = allocationSemaphore(name);
  const deadline = new Deadline(timeoutMs, `Allocation "${name}": rebalance request`);
  const done = await compareAndSetLoop(
    store,
    semaphore,
    (read) => {
      if (!read.entry?.definition) throw unknownAllocation(name);
      const annex = readAnnex(read.entry.annex);
      return { result: true, write: { ...read.entry, revision: read.entry.revision + 1, annex: writeAnnex({ ...annex, requests: annex.requests + 1 }) } };
    },
    { maxAttempts: 16, deadline },
  );
  if (!done) throw new StoreUnavailableError(`Allocation "${name}": the rebalance request kept conflicting with other writers`);
}

/** Validates an allocation name given by an operator (`<name>`), before anything is contacted. */
export function validateAllocationName(name: unknown): string {
  const problem = nameProblem(name, { max: MAX_ALLOCATION_NAME_LENGTH, what: 'a non-empty name' });
  if (problem !== undefined) throw invalidDefinition('<allocation>', 'allocation', problem);
  return name as string;
}

/** Every allocation in the cluster, read from it (one round trip), sorted by name: who owns what, skew, last rebalance. */
export async function readAllocations(store: PermitStore, clock: Clock, skewMs = 0, timeoutMs = 10_000): Promise<AllocationStatus[]> {
  const now = clock.now();
  return (await store.list({ timeoutMs }))
    .filter(({ name }) => name.startsWith(ALLOCATION_SEMAPHORE_PREFIX))
    .map(({ name, entry }) => allocationStatus(name, entry, now, skewMs));
}

/** One allocation, read from the cluster. Throws {@link NotFoundError} when it is not defined. */
export async function readAllocation(store: PermitStore, name: string, clock: Clock, skewMs = 0, timeoutMs = 10_000): Promise<AllocationStatus> {
  const semaphore = allocationSemaphore(validateAllocationName(name));
  const { entry } = await store.read(semaphore, { timeoutMs });
  if (!entry?.definition) throw unknownAllocation(name);
  return allocationStatus(semaphore, entry, clock.now(), skewMs);
}
