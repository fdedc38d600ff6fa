import type { SemaphoreEntry } from './semaphore-entry';
import { decodeEntry, encodedRevision } from './semaphore-entry.codec';
import { RecordView, type RecordCodec } from '../store/record-view';

export { ABSENT_NAMES_CAP } from '../store/record-view';

/** An entry as this node last saw it, and how old that knowledge is (the record view's `ObservedRecord` of an entry). */
export interface ObservedEntry {
  /** The decoded entry, or `undefined` when the store had none. */
  readonly entry: SemaphoreEntry | undefined;
  /** The exact stored value (`null` if absent), for compare-and-set. */
  readonly raw: string | null;
  /** How long ago (ms, this process's monotonic clock) the store last confirmed this value by read, write or event. */
  readonly ageMs: number;
}

/** How the view reads semaphores' entries. */
export const SEMAPHORE_CODEC: RecordCodec<SemaphoreEntry> = {
  decode: (name, raw) => decodeEntry(name, raw),
  revision: (entry) => entry.revision,
  encodedRevision: (raw) => encodedRevision(raw),
};

/**
 * The newest entry this node has seen per semaphore: the record view every capability keeps (see `RecordView`), on
 * semaphores' entries. It lets a node decide without a round trip, but only from knowledge younger than a stated
 * bound: events can be lost without any signal, so an entry nobody has confirmed for a while is read again.
 * Listeners hear every change of a known entry (leases use this to learn at once that their permit was revoked or
 * excluded).
 */
export class SemaphoreView extends RecordView<SemaphoreEntry> {
  constructor(monotonicNow?: () => number, onUnreadable?: (name: string, reason: string) => void) {
    super(SEMAPHORE_CODEC, monotonicNow, onUnreadable);
  }
}
