import type { Holder } from '../permits/permit';
import type { PermitLease } from '../permits/permit-lease';
import type { Amendment } from '../permits/permit-amendment';
import type { AllocationPlan } from './allocation';
import { readAnnex, writeAnnex } from './allocation-annex.codec';
import type { AllocationHandlers, AllocationParticipantOptions } from './allocation-participant.options';
import type { AllocationPermits } from './allocation-permits';
import { decidePlan } from './allocation-plan.rules';
import { coordinatorOf } from './allocation-slots.rules';
import { nameProblem } from '../core/names';

/**
 * The most characters of a resource's id (a name by lib/core/names otherwise): resources are held in permit records,
 * not keys, so they may be longer than a semaphore's name.
 */
export const MAX_RESOURCE_LENGTH = 1000;

/**
 * The coordinator's job in one allocation, done by whichever participant holds the oldest live permit: read the
 * resource set (again when told it changed, when a node asked for a rebalance, or every `resourcesIntervalMs`), and
 * write the plan (`decidePlan`) into the entry's annex by compare-and-set, re-decided on the entry each attempt reads
 * and written only while this node still coordinates.
 */
export class AllocationCoordinator {
  private resourceSet?: readonly string[];
  private resourcesReadAt = -Infinity;
  private resourcesStale = true;
  /** When the plan would change by itself (a rebalance delay ends), so the participant looks then. */
  wakeAt?: number;

  constructor(
    private readonly allocation: string,
    private readonly semaphore: string,
    private readonly holder: Holder,
    private readonly permits: AllocationPermits,
    private readonly handlers: Pick<AllocationHandlers, 'resources'>,
    private readonly options: AllocationParticipantOptions,
  ) {}

  /** The resource set changed: re-read it at the next plan. */
  resourcesChanged(): void {
    this.resourcesStale = true;
  }

  /** Whether the permit with `token` is the coordinator's, as this node's view shows now. */
  isCoordinator(token: number | undefined): boolean {
    return token !== undefined && coordinatorOf(this.permits.peek(this.semaphore), this.options.clock.now(), this.options.clockSkewMs)?.fencingToken === token;
  }

  /** Writes a new plan if one is due (the caller checked that this node coordinates). */
  async coordinate(permitLease: PermitLease): Promise<void> {
    const entry = this.permits.peek(this.semaphore);
    if (!entry) return;
    const annex = readAnnex(entry.annex);
    if (annex.requests > (annex.plan?.answered ?? 0)) this.resourcesStale = true;
    const resources = await this.resources();
    if (!resources) return;
    const token = permitLease.permit.fencingToken;
    const input = { resources, skewMs: this.options.clockSkewMs, delayMs: this.options.delayMs, by: this.holder.acquirer };
    const first = decidePlan({ ...input, entry, now: this.options.clock.now() });
    this.wakeAt = first.wakeAt;
    if (!first.plan) return;
    const result = await this.permits.amend(permitLease.permit, ({ entry: read, now }): Amendment<AllocationPlan | undefined> => {
      if (coordinatorOf(read, now, this.options.clockSkewMs)?.fencingToken !== token) return { result: undefined };
      const { plan } = decidePlan({ ...input, entry: read, now });
      return plan ? { annex: writeAnnex({ ...readAnnex(read.annex), plan }), result: plan } : { result: undefined };
    });
    if (result.granted && result.result) this.options.onPlan?.(result.result);
  }

  /** The resource set, re-read when stale (interval, or told it changed); `undefined` if it was never readable. */
  private async resources(): Promise<readonly string[] | undefined> {
    const interval = this.options.resourcesIntervalMs ?? 30_000;
    if (this.resourcesStale || performance.now() - this.resourcesReadAt >= interval) {
      try {
        const set = await this.handlers.resources();
        if (!Array.isArray(set) || set.some((id) => typeof id !== 'string')) throw new TypeError(`resources() of "${this.allocation}" must return an array of strings`);
        const bad = set.findIndex((id) => nameProblem(id, { max: MAX_RESOURCE_LENGTH }) !== undefined);
        if (bad >= 0) throw new TypeError(`resources() of "${this.allocation}" must return names: #${bad + 1} ${nameProblem(set[bad], { max: MAX_RESOURCE_LENGTH })}`);
        this.resourceSet = set;
        this.resourcesReadAt = performance.now();
        this.resourcesStale = false;
      } catch (error) {
        this.options.onError?.(error, 'resources()');
      }
    }
    return this.resourceSet;
  }
}
