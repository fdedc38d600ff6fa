import { Injectable } from '@nestjs/common';
import { validateSemaphoreName } from '../../permits/definition.validator';
import type { PermitLease } from '../../permits/permit-lease';
import type { RunGrant, RunOptions, RunOutcome } from '../../permits/permit-executor';
import { permitContext } from './permit-context';
import { PermitsRuntime } from './permits.runtime';

export type { RunOptions, RunOutcome } from '../../permits/permit-executor';

/**
 * The Nest side of a run under a permit (decorated ticks and `withPermit`): the permits room's executor does the
 * claim, decision, start margin, lease and release; this only puts the lease in async context, so
 * `currentPermit()` and `currentLease()` answer inside the work.
 * Used inside the module, not by applications.
 */
@Injectable()
export class ExclusiveRuns {
  constructor(private readonly runtime: PermitsRuntime) {}

  /** One run of `fn` under `semaphore`'s permit, or the denial that kept it from starting. */
  run<T>(semaphore: string, fn: (lease: PermitLease, grant: RunGrant) => T | Promise<T>, options: RunOptions = {}): Promise<RunOutcome<T>> {
    validateSemaphoreName(semaphore);
    return this.runtime.executor.run(semaphore, (lease, grant) => permitContext.run(lease, () => fn(lease, grant)), options);
  }
}
