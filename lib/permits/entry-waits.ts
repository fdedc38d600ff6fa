/** One wait: woken by news of its name or at its deadline, whichever comes first. */
interface Wait {
  readonly name: string;
  readonly at: number;
  wake?: () => void;
}

/**
 * Waits for the next news of a semaphore, each with a deadline, on one timer for all of them: a tick starts many
 * waits at once with the same head start, so their deadlines come in the order they were made and a queue
 * serves them (no timer per wait). Real time, not the engine's clock: a wait is for events on the network. The
 * timer is not unref'd: a decision is waiting on it, and it lasts at most a head start.
 */
export class EntryWaits {
  private readonly byName = new Map<string, Set<Wait>>();
  private readonly queue: Wait[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** Whether anything waits for news of `name`. */
  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Resolves at the next {@link notify} of `name`, or after `ms`. */
  next(name: string, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wait: Wait = { name, at: performance.now() + ms };
      wait.wake = () => {
        wait.wake = undefined;
        const waits = this.byName.get(name);
        waits?.delete(wait);
        if (waits?.size === 0) this.byName.delete(name);
        resolve();
      };
      const waits = this.byName.get(name) ?? new Set<Wait>();
      this.byName.set(name, waits.add(wait));
      // Deadlines made later with a shorter wait go in their place, so the queue stays in deadline order.
      let i = this.queue.length;
      while (i > 0 && this.queue[i - 1].at > wait.at) i--;
      this.queue.splice(i, 0, wait);
      if (i === 0) this.arm();
    });
  }

  /** News of `name`: wakes everything waiting for it. */
  notify(name: string): void {
    const waits = this.byName.get(name);
    if (waits) for (const wait of [...waits]) wait.wake?.();
  }

  /** Wakes every wait (the engine is going away). */
  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const wait of this.queue.splice(0)) wait.wake?.();
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0 && !this.queue[0].wake) this.queue.shift();
    if (this.queue.length === 0) return;
    this.timer = setTimeout(() => this.sweep(), Math.max(0, this.queue[0].at - performance.now()));
  }

  private sweep(): void {
    const now = performance.now();
    while (this.queue.length > 0 && (this.queue[0].at <= now || !this.queue[0].wake)) this.queue.shift()!.wake?.();
    this.arm();
  }
}
