/** A duration: milliseconds as a number, or a string such as `'30s'`, `'5m'`, `'1h'`, `'1.5h'`. */
export type DurationInput = number | string;

/** A semaphore definition as users write it (module options, service, admin tools). */
export interface SemaphoreDefinitionInput {
  /** The semaphore's name: 1 to 200 characters. */
  name: string;
  /** How many acquirers may hold a permit at once. `0` pauses the semaphore. Default `1`. */
  permits?: number;
  /** How long a permit lives unless refreshed. Required. */
  duration: DurationInput;
  /** Regex (full match) the node's group must match. Default `'.*'` (any group). */
  groupPattern?: string;
  /** Regex (full match) the node's acquirer name must match. Default `'.*'` (any acquirer). */
  acquirerPattern?: string;
}

/** A validated semaphore definition, as stored in the cluster. */
export interface SemaphoreDefinition {
  /** The semaphore's name. */
  readonly name: string;
  /** How many acquirers may hold a permit at once; `0` means paused. */
  readonly permits: number;
  /** How long a permit lives unless refreshed, in milliseconds. */
  readonly durationMs: number;
  /** Regex (full match) for the node's group. */
  readonly groupPattern: string;
  /** Regex (full match) for the node's acquirer name. */
  readonly acquirerPattern: string;
  /** Set while paused by `pause()`: the permits that `resume()` restores. */
  readonly pausedFrom?: number;
}

/** The most characters a semaphore name may have. */
export const MAX_SEMAPHORE_NAME_LENGTH = 200;
