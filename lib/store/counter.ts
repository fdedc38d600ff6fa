import type { RecordCallOptions } from './record-map';

/**
 * Counters that never go back (fencing tokens, epochs, revisions), across nodes, restarts of the nodes and, where
 * the store can lose data, across its loss. PostgreSQL: a sequence; Redis: `INCR`; Hazelcast: a record advanced by
 * compare-and-set, with the partition canaries to tell a lost one; memory: a number.
 */
export interface Counters {
  /**
   * The next value of counter `name`. After a loss of the counter's data the next value is at least the current time
   * in microseconds (and above anything this process saw): above every value handed out before the loss, as long as
   * the counter handed out fewer than 1,000 values per millisecond since it last jumped.
   */
  next(name: string, options?: RecordCallOptions): Promise<{
    /** Greater than every value this counter handed out before, on any node. */
    readonly value: number;
    /**
     * Set when the store cannot rule out that the counter was lost since this time (epoch ms): the value then jumped
     * past anything it could have handed out, and whoever hands out leases with it may want to wait out the ones
     * handed out before the loss.
     */
    readonly lostSince?: number;
  }>;
  /** The last value handed out (0 before the first). */
  current(name: string, options?: RecordCallOptions): Promise<number>;
}

/** A value a counter handed out (what {@link Counters.next} resolves to). */
export type CounterValue = Awaited<ReturnType<Counters['next']>>;
