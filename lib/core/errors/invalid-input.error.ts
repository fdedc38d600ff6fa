import { GatekeeperError } from './gatekeeper.error';

/**
 * A value given to the library is invalid, and nothing was stored: a module option, a decorator's argument, a
 * semaphore or schedule definition, an operator's request about a job, a task query or submission, a migration.
 * `field` (with `of`) names exactly what to fix and `reason` says why. The admin API answers it 400 with `field` and,
 * when the input is about a named thing, `{ [kind]: id }`. A module option or a decorator misuse stops the app with
 * this error printed as its one line (no stack): the mistake is fixed from the message alone.
 */
export class InvalidInputError extends GatekeeperError {
  /** What the value belongs to, as the message names it: `GatekeeperModule options`, `@TaskHandler('export') on ExportJobs.run`, `Semaphore "billing"`, `Schedule "nightly"`, `Task "mail:welcome-42"`, `Job "Billing.charge"`, `Task query`, `migration`. */
  readonly of: string;
  /** The field that is wrong as the caller wrote it (`identity.group`, `permits`, `backoff.max`); `undefined` when the whole input is (a decorator on something that is not a method). */
  readonly field: string | undefined;
  /** What is wrong with it. */
  readonly reason: string;
  /** The kind of the named thing the input is about, when it is about one. */
  readonly kind: 'semaphore' | 'schedule' | 'job' | 'task' | undefined;
  /** That thing's name (`'<unnamed>'` when the name itself is what is missing). */
  readonly id: string | undefined;

  constructor(
    /** The whole message, naming what to fix. */
    message: string,
    input: {
      readonly of: string;
      readonly field: string | undefined;
      readonly reason: string;
      readonly kind?: 'semaphore' | 'schedule' | 'job' | 'task';
      readonly id?: string;
      /** Print as its one line, not a stack (see the class). */
      readonly oneLine?: boolean;
    },
  ) {
    super(message);
    this.of = input.of;
    this.field = input.field;
    this.reason = input.reason;
    this.kind = input.kind;
    this.id = input.id;
    if (input.oneLine) this.printAsOneLine();
  }
}
