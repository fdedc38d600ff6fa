import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** A semaphore was used or edited that has no definition in the cluster. */
export class UnknownSemaphoreError extends GatekeeperError {
  constructor(
    /** The name that has no definition. */
    readonly semaphore: string,
    /** Where it was used, e.g. `BillingJobs.charge`, when known. */
    readonly usedBy?: string,
  ) {
    super(
      usedBy
        ? `${usedBy} uses semaphore "${semaphore}", which has no definition and autoDefine is off: ` +
            `add it to GatekeeperModule definitions or turn autoDefine on`
        : `Semaphore "${semaphore}" has no definition`,
    );
  }
}
