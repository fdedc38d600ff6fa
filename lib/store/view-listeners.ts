/** A listener of a view, and the keys it needs to hear of (all when `wants` is absent). */
interface Listener<T> {
  readonly listener: (key: string, entry: T | undefined) => void;
  readonly wants?: (key: string) => boolean;
}

/**
 * Who hears of which keys of an event-fed view: each listener hears every change of a key it wants. Whether anyone
 * wants a key also tells the view whether a value must be decoded on arrival or may wait until asked for.
 */
export class ViewListeners<T> {
  private readonly listeners = new Set<Listener<T>>();

  /** Calls `listener` on every change of a record, or only of the keys `wants` accepts; returns the unsubscribe. */
  add(listener: (key: string, entry: T | undefined) => void, wants?: (key: string) => boolean): () => void {
    const subscription: Listener<T> = { listener, wants };
    this.listeners.add(subscription);
    return () => this.listeners.delete(subscription);
  }

  /** Whether a listener wants to hear of changes of `key`. */
  wanted(key: string): boolean {
    for (const { wants } of this.listeners) if (!wants || wants(key)) return true;
    return false;
  }

  /** Tells every listener that wants `key` of its change. */
  tell(key: string, entry: T | undefined): void {
    for (const { listener, wants } of this.listeners) if (!wants || wants(key)) listener(key, entry);
  }
}
