import type { RecordMap } from '../../lib/store/record-map';
import type { StoreBackend } from '../../lib/store/store-backend';

/** The writes of a record map a test may hold up or fail. */
type MapWrite = 'create' | 'replace' | 'remove' | 'put' | 'delete';

/**
 * Runs `before` ahead of every write of map `name` on `backend` (a node of a memory backend, say): a write that takes
 * long, or fails, while a test wants it to. The backend's other maps, and its reads, are untouched.
 */
export function beforeMapWrites<B extends StoreBackend>(backend: B, name: string, before: (write: MapWrite) => Promise<void> | void): B {
  const open = backend.map.bind(backend);
  backend.map = async (mapName, spec) => {
    const map = await open(mapName, spec);
    if (mapName !== name) return map;
    const hooked = Object.create(map) as RecordMap;
    for (const write of ['create', 'replace', 'remove', 'put', 'delete'] as const) {
      const original = (map[write] as (...args: unknown[]) => Promise<unknown>).bind(map);
      (hooked as unknown as Record<MapWrite, unknown>)[write] = async (...args: unknown[]) => {
        await before(write);
        return original(...args);
      };
    }
    return hooked;
  };
  return backend;
}
