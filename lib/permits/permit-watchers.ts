/**
 * Who to tell when a permit is lost, by semaphore and fencing token. A listener is called once at most, and a
 * failing listener never stops the others.
 */
export class PermitWatchers {
  private readonly bySemaphore = new Map<string, Map<number, Set<(reason: string) => void>>>();

  /** Registers `onLost` for the permit; returns the unsubscribe function. */
  add(semaphore: string, fencingToken: number, onLost: (reason: string) => void): () => void {
    const tokens = this.bySemaphore.get(semaphore) ?? new Map<number, Set<(reason: string) => void>>();
    this.bySemaphore.set(semaphore, tokens);
    const listeners = tokens.get(fencingToken) ?? new Set();
    tokens.set(fencingToken, listeners);
    listeners.add(onLost);
    return () => {
      listeners.delete(onLost);
      // Only remove the maps if they are still the ones registered here (a notify may have replaced them).
      if (listeners.size === 0 && tokens.get(fencingToken) === listeners) tokens.delete(fencingToken);
      if (tokens.size === 0 && this.bySemaphore.get(semaphore) === tokens) this.bySemaphore.delete(semaphore);
    };
  }

  /** Whether any permit of `semaphore` is watched. */
  has(semaphore: string): boolean {
    return this.bySemaphore.has(semaphore);
  }

  /** The watched tokens of `semaphore`. */
  tokens(semaphore: string): number[] {
    return [...(this.bySemaphore.get(semaphore)?.keys() ?? [])];
  }

  /** Tells every watcher of the permit, once; they are removed. */
  notify(semaphore: string, fencingToken: number, reason: string): void {
    const tokens = this.bySemaphore.get(semaphore);
    const listeners = tokens?.get(fencingToken);
    if (!tokens || !listeners) return;
    tokens.delete(fencingToken);
    if (tokens.size === 0) this.bySemaphore.delete(semaphore);
    for (const listener of listeners) {
      try {
        listener(reason);
      } catch {
        // a failing listener must not keep the others from hearing it
      }
    }
  }
}
