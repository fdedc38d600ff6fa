import { InvalidInputError } from '../../core/errors/invalid-input.error';

/**
 * A decorator misused: on something that is not a method, twice on one method, with a bad argument or option, a second
 * handler for a task type, or on a class no `GatekeeperModule` serves. `where` names the decorator and the method
 * (`@TaskHandler('export') on ExportJobs.run`), `field` the option at fault when there is one. Printed as its one line.
 */
export function invalidDecorator(where: string, reason: string, field?: string): InvalidInputError {
  return new InvalidInputError(field === undefined ? `${where}: ${reason}` : `${where}: invalid ${field}: ${reason}`, { of: where, field, reason, oneLine: true });
}
