import { NotFoundError } from '../../core/errors/not-found.error';
import { LeaseLostError } from '../../core/errors/lease-lost.error';

/** A semaphore with no definition in the cluster, used (by `usedBy`, e.g. `BillingJobs.charge`) or edited. */
export function unknownSemaphore(semaphore: string, usedBy?: string): NotFoundError {
  return new NotFoundError(
    'semaphore',
    semaphore,
    usedBy
      ? `${usedBy} uses semaphore "${semaphore}", which has no definition and autoDefine is off: ` +
          `add it to GatekeeperModule definitions or turn autoDefine on`
      : `Semaphore "${semaphore}" has no definition`,
  );
}

/** The permit of `semaphore` can no longer be vouched for (`PermitLease.assertValid`, the lease's signal). */
export function permitLost(semaphore: string, reason: string): LeaseLostError {
  return new LeaseLostError('permit', semaphore, reason, `Permit of "${semaphore}" is lost: ${reason}`);
}
