/** Where the library reads time. Inject a fake one in tests; every rule takes `now` from it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The wall clock of this process. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * A clock that moves only when told to, for tests: pass it as the module's `clock` option (or to a store) and move
 * time with {@link ManualClock.advance} or {@link ManualClock.set} instead of waiting.
 */
export class ManualClock implements Clock {
  /** @param time - Where the clock starts, in milliseconds since the epoch. Default: the current wall-clock time. */
  constructor(private time: number = Date.now()) {}

  /** The time it was last set to, in milliseconds since the epoch. */
  now(): number {
    return this.time;
  }

  /** Moves the clock `ms` milliseconds forward (backward when negative, to simulate a clock that steps back). */
  advance(ms: number): void {
    this.time += ms;
  }

  /** Sets the clock to `time`, in milliseconds since the epoch. */
  set(time: number): void {
    this.time = time;
  }
}
