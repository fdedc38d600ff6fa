import { Deadline } from '../core/deadline';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { compareAndSetLoop } from '../permits/compare-and-set.loop';
import type { PermitStore } from '../permits/permit-store';
import { allocationSemaphore } from './allocation';
import { readAnnex, writeAnnex } from './allocation-annex.codec';
import { UnknownAllocationError } from './errors/unknown-allocation.error';

/**
 * Asks an allocation's coordinator for a rebalance, from any node (an operator's, the CLI's): one compare-and-set
 * on the allocation's entry that counts the request; the coordinator re-reads the resource set and writes a new
 * plan once the last one is carried out. Throws {@link UnknownAllocationError} when there is no such allocation.
 */
export async function requestRebalance(store: PermitStore, name: string, timeoutMs = 10_000): Promise<void> {
  const semaphore = allocationSemaphore(name);
  const deadline = new Deadline(timeoutMs, `Allocation "${name}": rebalance request`);
  const done = await compareAndSetLoop(
    store,
    semaphore,
    (read) => {
      if (!read.entry?.definition) throw new UnknownAllocationError(name);
      const annex = readAnnex(read.entry.annex);
      return { result: true, write: { ...read.entry, revision: read.entry.revision + 1, annex: writeAnnex({ ...annex, requests: annex.requests + 1 }) } };
    },
    { maxAttempts: 16, deadline },
  );
  if (!done) throw new StoreUnavailableError(`Allocation "${name}": the rebalance request kept conflicting with other writers`);
}
