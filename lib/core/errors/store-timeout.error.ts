import { StoreUnavailableError } from './store-unavailable.error';

/** A store call did not answer within its deadline (a stalled member); its outcome is unknown. Callers fail closed. */
export class StoreTimeoutError extends StoreUnavailableError {}
