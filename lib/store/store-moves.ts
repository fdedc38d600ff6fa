import { randomUUID } from 'node:crypto';
import type { CapabilityState } from '../core/capability-state';
import { parseJsonObject } from '../core/json-object';
import type { RecordCallOptions } from './record-map';
import { MapHold } from './map-hold';
import type { StoreBackend } from './store-backend';

/** The record map where a store says which capabilities moved away from it, or are moving onto it. */
export const STORE_MOVES_MAP = 'store-moves';

/** What a store says of one capability's move (`nestjs-gatekeeper store move`), keyed by the capability. */
export interface StoreMoveMark {
  readonly capability: CapabilityState;
  /** `arriving`: prepared onto this store, not finished; `left`: moved from this store to `other`. */
  readonly state: 'arriving' | 'left';
  /** The other store's kind (`postgres`, `redis`, `hazelcast`). */
  readonly other: string;
  /** When (epoch ms, the mover's clock). */
  readonly at: number;
}

/** The move marks `backend` (open) holds, by capability; unreadable records are skipped. */
export async function readMoveMarks(backend: StoreBackend, options: RecordCallOptions = {}): Promise<StoreMoveMark[]> {
  const hold = new MapHold(backend, STORE_MOVES_MAP, 'store');
  try {
    const records = await (await hold.open()).list(options);
    return records.flatMap(({ key, value }) => {
      try {
        const mark = parseJsonObject(key, value);
        return (mark.state === 'arriving' || mark.state === 'left') && typeof mark.other === 'string' && Number.isFinite(mark.at)
          ? [{ capability: key as CapabilityState, state: mark.state, other: mark.other, at: mark.at as number }]
          : [];
      } catch {
        return [];
      }
    });
  } finally {
    await hold.close();
  }
}

/** Writes (or, with `null`, removes) the mark of `capability` on `backend` (open): only the move writes these. */
export async function writeMoveMark(backend: StoreBackend, capability: CapabilityState, mark: Omit<StoreMoveMark, 'capability'> | null, options: RecordCallOptions = {}): Promise<void> {
  const hold = new MapHold(backend, STORE_MOVES_MAP, 'store');
  try {
    const map = await hold.open();
    if (mark === null) await map.delete(capability, options);
    else await map.put(capability, JSON.stringify({ state: mark.state, other: mark.other, at: mark.at }), options);
  } finally {
    await hold.close();
  }
}

/**
 * Whether `a` and `b` (both open) are one store under two names (one server reached by two URLs, say): a record
 * written on `a` is read back on `b`. A move from a store onto itself would hold and then mark as left every
 * semaphore it has. The record is removed again.
 */
export async function sameStore(a: StoreBackend, b: StoreBackend, options: RecordCallOptions = {}): Promise<boolean> {
  const key = `probe:${randomUUID()}`;
  const onA = new MapHold(a, STORE_MOVES_MAP, 'store');
  const onB = new MapHold(b, STORE_MOVES_MAP, 'store');
  try {
    const written = await onA.open();
    await written.put(key, '{}', options);
    try {
      return (await (await onB.open()).get(key, options)) !== undefined;
    } finally {
      await written.delete(key, options);
    }
  } finally {
    await onA.close();
    await onB.close();
  }
}

/** Why an operator's edit of `capability` aimed at a store it moved away from is refused (the CLI's, a semaphore's). */
export function movedAwayReason(capability: CapabilityState, other: string, at: number): string {
  return `no live node uses this store for ${capability}: it moved to the ${other} store on ${new Date(at).toISOString()}; edit it there (--backend ${other})`;
}
