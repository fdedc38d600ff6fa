import { GatekeeperError } from './gatekeeper.error';

/** The permit store could not be reached, or a write's outcome could not be settled. Callers fail closed. */
export class StoreUnavailableError extends GatekeeperError {}
