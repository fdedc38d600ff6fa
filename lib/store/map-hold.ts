import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { openObservedMap } from './observed-record-map';
import type { RecordChanges, RecordMap, RecordMapSpec, Unwatch, WatchOptions } from './record-map';
import type { StoreBackend } from './store-backend';

/**
 * A capability store's hold on one record map of its backend: {@link MapHold.open} opens the backend and the map
 * (and watches it, when given what to tell), {@link MapHold.close} lets all of it go, also when it comes while the
 * backend is still opening (the open then gives up), and {@link MapHold.map} hands the map to calls only while it is
 * open. Every record store holds its maps this way, so none opens or closes a backend its own way.
 */
export class MapHold {
  private held?: RecordMap;
  private unwatch?: Unwatch;
  private opened = false;

  constructor(
    private readonly backend: StoreBackend,
    /** The map's name within the backend. */
    readonly name: string,
    /** The store that holds it, for errors (`'schedule'`: "the schedule store is not connected"). */
    private readonly store: string,
    private readonly spec?: RecordMapSpec,
  ) {}

  /** Opens the backend and the map, and watches it when `changes` is given. On failure, lets go of what it opened. */
  async open(changes?: RecordChanges, options?: WatchOptions): Promise<RecordMap> {
    // Held from the call on: a close() while the backend is still opening makes it give up.
    this.opened = true;
    try {
      await this.backend.open();
      const map = await openObservedMap(this.backend, this.name, this.spec);
      if (changes) this.unwatch = await map.watch(changes, options);
      this.held = map;
      return map;
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  /** Stops the watch and lets go of the backend (once, however often called). */
  async close(): Promise<void> {
    await this.unwatch?.().catch(() => undefined);
    this.unwatch = undefined;
    this.held = undefined;
    if (!this.opened) return;
    this.opened = false;
    await this.backend.close();
  }

  /** The map, while open; a `StoreUnavailableError` otherwise (fail closed). */
  map(): RecordMap {
    if (!this.held) throw new StoreUnavailableError(`the ${this.store} store is not connected`);
    return this.held;
  }
}
