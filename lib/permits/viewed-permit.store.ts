import type { SemaphoreEntry } from './semaphore-entry';
import { SemaphoreView, type ObservedEntry } from './semaphore.view';

/** The part of a {@link PermitStore} that answers from this node's view, the same for every store. */
export abstract class ViewedPermitStore {
  /** @internal What this node has seen of the entries; the store feeds it from its reads, writes and events. */
  protected readonly view = new SemaphoreView(undefined, (name, reason) => this.reportUnreadable(name, reason));

  /** @internal A value the view kept undecoded turned out unreadable once needed: reported as the store reports its own. */
  protected abstract reportUnreadable(name: string, reason: string): void;

  /** What this node knows of `name` without asking the store, and how old that knowledge is. */
  peek(name: string): ObservedEntry | undefined {
    return this.view.peek(name);
  }

  /** Every entry this node knows of, sorted by name. */
  known(): Array<{ name: string; entry: SemaphoreEntry }> {
    return this.view.entries();
  }

  /** The newest readable entry this node ever saw of `name`, even if it is lost or unreadable now (for rebuilds). */
  remembered(name: string): SemaphoreEntry | undefined {
    return this.view.remembered(name);
  }

  /**
   * Calls `listener` whenever this node learns that an entry changed, or only of the names `wants` accepts;
   * returns the unsubscribe function.
   */
  watch(listener: (name: string, entry: SemaphoreEntry | undefined) => void, wants?: (name: string) => boolean): () => void {
    return this.view.subscribe(listener, wants);
  }
}
