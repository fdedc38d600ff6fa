import { randomUUID } from 'node:crypto';
import type { NewStoreRules } from '../store/new-store-rules';
import { earlierLifeOf, noteEvidence, withoutRecoveryWait } from './new-cluster.rules';
import { SEMAPHORE_KEYS_MAP, SEMAPHORE_MAP } from './permit-record.store';
import { decodeEntry, encodeEntry } from './semaphore-entry.codec';
import type { SemaphoreEntry } from './semaphore-entry';

function decodeOrUndefined(name: string, raw: string): SemaphoreEntry | undefined {
  try {
    return decodeEntry(name, raw);
  } catch {
    return undefined;
  }
}

/** When a note says its semaphore first had an entry (`undefined`: unreadable, which counts as early). */
function notedAt(note: string): number | undefined {
  try {
    const since = (JSON.parse(note) as { since?: unknown }).since;
    return typeof since === 'number' ? since : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The semaphores' part of declaring a store new (see `NewStoreRules`): an entry shows an earlier life when a permit
 * was ever granted under it, when a node rebuilt it knowing it before, or when it cannot be read; a note shows one
 * when its entry is gone or was rebuilt after a loss later than the note. The recovery wait is lifted from an entry
 * that shows none.
 */
export const SEMAPHORE_NEW_STORE_RULES: NewStoreRules = {
  map: SEMAPHORE_MAP,
  noun: 'semaphore',
  notes: SEMAPHORE_KEYS_MAP,
  earlierLife(where, name, raw) {
    const entry = decodeOrUndefined(name, raw);
    if (!entry) return { where, reason: 'its value cannot be read, so nothing shows it never held a permit' };
    return earlierLifeOf(where, entry);
  },
  notedEarlier(where, name, note, raw) {
    return noteEvidence(where, notedAt(note), raw === null ? undefined : decodeOrUndefined(name, raw));
  },
  lifted(name, raw) {
    const entry = decodeOrUndefined(name, raw);
    if (!entry || earlierLifeOf(name, entry)) return undefined;
    const next = withoutRecoveryWait(entry);
    return next && { value: encodeEntry({ ...next, writeId: randomUUID() }), waitedUntil: entry.graceUntil };
  },
};
