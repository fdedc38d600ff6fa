import { GatekeeperError } from '../../core/errors/gatekeeper.error';

/** Thrown by a handler: the task itself is wrong; it is not retried but goes to the invalid-task handler. */
export class InvalidTaskError extends GatekeeperError {}
