import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/**
 * A decorator is misused: on something that is not a method, twice on one method, with a bad argument or option,
 * a second handler for a task type, or on a class no `GatekeeperModule` serves. Thrown when the class is declared
 * or when the module starts, so the mistake never reaches a tick. `where` names the decorator and the method, e.g.
 * `@TaskHandler('export') on ExportJobs.run`; `field` the option at fault when there is one.
 */
export class InvalidDecoratorError extends GatekeeperError {
  constructor(
    /** The decorator and where it is applied, e.g. `@ClusterSingleton on BillingJob.charge`. */
    readonly where: string,
    /** What is wrong. */
    readonly reason: string,
    /** The argument or option at fault, e.g. `lease` or `backoff.max`, when there is one. */
    readonly field?: string,
  ) {
    super(field === undefined ? `${where}: ${reason}` : `${where}: invalid ${field}: ${reason}`);
    this.printAsOneLine();
  }
}
