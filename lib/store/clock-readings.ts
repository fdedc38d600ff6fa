/** A listener of a backend's readings of its store's clock (see `StoreBackend.onClockReading`). */
type ClockReadingListener = (storeMs: number, sentAt: number) => void;

/**
 * Who hears the readings of the store's clock a backend's own calls bring back (`StoreBackend.onClockReading`): the
 * backend tells each reading as its answer comes. A listener's failure is its own.
 */
export class ClockReadings {
  private readonly listeners = new Set<ClockReadingListener>();

  /** Adds a listener; returns what removes it. */
  add(listener: ClockReadingListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The store's clock read `storeMs` (epoch ms, rounded down) at some moment after `sentAt` (`performance.now()`). */
  tell(storeMs: number, sentAt: number): void {
    if (!Number.isFinite(storeMs)) return;
    for (const listener of this.listeners) {
      try {
        listener(storeMs, sentAt);
      } catch {
        // The listener's own business.
      }
    }
  }
}
