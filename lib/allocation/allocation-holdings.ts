import type { AcquireResult } from '../permits/acquire-result';
import type { Holder, Permit } from '../permits/permit';
import type { AmendResult } from '../permits/permit-amendment';
import { readAnnex, writeAnnex } from './allocation-annex.codec';
import { amendHoldings, type HoldingsChange } from './allocation-holdings.rules';
import type { AllocationPermits } from './allocation-permits';

/**
 * What a participant writes on its allocation's entry with its permit: each write one compare-and-set that also
 * refreshes the permit (see `PermitEngine.amend`), so no resource is ever listed by two live permits.
 */
export class AllocationHoldings {
  constructor(
    private readonly permits: AllocationPermits,
    private readonly holder: Holder,
  ) {}

  /** Refreshes the permit and nothing else (its lease's renewal). */
  async refresh(permit: Permit): Promise<AcquireResult> {
    const result = await this.permits.amend(permit, () => ({ result: undefined }), { local: true });
    return result.granted ? { granted: true, outcome: 'refreshed', permit: result.permit } : result;
  }

  /** Takes `resources` off the permit. */
  release(permit: Permit, resources: readonly string[]): Promise<AmendResult<HoldingsChange>> {
    return this.amend(permit, { release: resources });
  }

  /** Lists on the permit those of `resources` no other live permit lists (see `amendHoldings`). */
  claim(permit: Permit, resources: readonly string[]): Promise<AmendResult<HoldingsChange>> {
    return this.amend(permit, { claim: resources });
  }

  /** Asks the coordinator for a rebalance (counted in the annex); whether the request landed. */
  async requestRebalance(permit: Permit): Promise<boolean> {
    const result = await this.permits.amend(permit, ({ entry }) => {
      const annex = readAnnex(entry.annex);
      return { annex: writeAnnex({ ...annex, requests: annex.requests + 1 }), result: undefined };
    });
    return result.granted;
  }

  private amend(permit: Permit, change: { claim?: readonly string[]; release?: readonly string[] }): Promise<AmendResult<HoldingsChange>> {
    return this.permits.amend(permit, ({ permits, revision }) => {
      const next = amendHoldings(permits, this.holder, permit.fencingToken, change, revision);
      return { permits: next.permits, result: next };
    });
  }
}
