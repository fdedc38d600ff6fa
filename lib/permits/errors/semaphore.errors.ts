import { NotFoundError } from '../../core/errors/not-found.error';

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
