import { GatekeeperError } from './gatekeeper.error';

/** A value in the library's maps could not be decoded (written by hand, or by another format). */
export class CorruptStateError extends GatekeeperError {
  constructor(
    /** The map key whose value is unreadable. */
    readonly key: string,
    /** What is wrong with it. */
    readonly reason: string,
  ) {
    super(`Stored value for "${key}" is unreadable: ${reason}`);
  }
}
