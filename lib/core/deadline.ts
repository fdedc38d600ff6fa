import { StoreTimeoutError } from './errors/store-timeout.error';

/** A point in this process's monotonic time by which a decision must be done; each store call gets what is left. */
export class Deadline {
  private readonly at: number;

  constructor(
    /** The whole budget, in ms. */
    readonly budgetMs: number,
    private readonly what: string,
  ) {
    this.at = performance.now() + budgetMs;
  }

  /** Ms left; throws {@link StoreTimeoutError} when none is. */
  left(): number {
    const left = Math.floor(this.at - performance.now());
    if (left <= 0) throw new StoreTimeoutError(`${this.what}: deadline of ${this.budgetMs} ms passed`);
    return left;
  }
}
