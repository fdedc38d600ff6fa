/** Where the library reads time. Inject a fake one in tests; every rule takes `now` from it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The wall clock of this process. */
export const systemClock: Clock = { now: () => Date.now() };
