import { Predicates, type IMap, type Predicate } from 'hazelcast-client';
import { writtenByPattern } from './semaphore-entry.codec';

/** What a node's listeners on the semaphore map tell its store. */
export interface SemaphoreMapChanges {
  /** A value another node (or version, or operator) wrote. */
  heard(name: string, value: string): void;
  /** An entry was removed, whoever wrote it last. */
  removed(name: string): void;
  /** An entry disappeared without being lost with its partition (eviction, expiry: misconfigured maps). */
  vanished(name: string): void;
  /** The whole map was cleared or evicted. */
  cleared(): void;
}

/** The registrations of {@link listenToSemaphoreMap}, to remove. */
export interface SemaphoreMapListeners {
  readonly values: string;
  readonly removals: string;
}

/** The predicate of a node's listener on the semaphore map: every value but those written with `writer`'s mark. */
export function writtenByOthers(writer: string): Predicate {
  return Predicates.not(Predicates.regex('this', writtenByPattern(writer)));
}

/**
 * Registers a node's two listeners on the semaphore map. A node learns its own writes from their answers, so the
 * members leave out of the first the values it wrote (their writeId carries `writer`, its mark): per write, one
 * event less to send, receive and decode; every value another node or version wrote still comes, with its value.
 * Removals come on the second, without values: a predicate would test the value removed, and so leave out the
 * removal of an entry this node wrote last. `call` runs each registration (deadline, failure mapping).
 */
export async function listenToSemaphoreMap(
  map: IMap<string, string>,
  writer: string,
  changes: SemaphoreMapChanges,
  call: <T>(operation: () => Promise<T>) => Promise<T>,
): Promise<SemaphoreMapListeners> {
  const values = await call(() => map.addEntryListenerWithPredicate(
    {
      added: (e) => changes.heard(e.key, e.value),
      updated: (e) => changes.heard(e.key, e.value),
      merged: (e) => changes.heard(e.key, e.value),
    },
    writtenByOthers(writer),
    undefined,
    true,
  ));
  try {
    const removals = await call(() => map.addEntryListener(
      {
        removed: (e) => changes.removed(e.key),
        evicted: (e) => changes.vanished(e.key),
        expired: (e) => changes.vanished(e.key),
        mapCleared: () => changes.cleared(),
        mapEvicted: () => changes.cleared(),
      },
      undefined,
      false,
    ));
    return { values, removals };
  } catch (error) {
    await map.removeEntryListener(values).catch(() => undefined);
    throw error;
  }
}

/** Removes both listeners (failures ignored: the store is closing). */
export async function stopListening(map: IMap<string, string>, listeners: SemaphoreMapListeners): Promise<void> {
  await Promise.all([listeners.values, listeners.removals].map((id) => map.removeEntryListener(id).catch(() => undefined)));
}
