import { randomUUID } from 'node:crypto';
import type { StoreBackend } from './store-backend';

/**
 * The write ids of the values written through one backend instance, `<mark>.<n>`: the mark is unique to the
 * instance, so a value's `"writeId"` says whether this node wrote it (what a watch given the mark as
 * `WatchOptions.exceptMark` leaves out, and how a lost answer is settled). Made here, above the backends, for every
 * one of them: get them from {@link writeIdsOf}. A backend takes part only by honouring `exceptMark`.
 */
export class WriteIds {
  /** This instance's mark. */
  readonly mark = randomUUID();
  private written = 0;

  /** A write id no other write of any instance carries. */
  next(): string {
    return `${this.mark}.${(this.written++).toString(36)}`;
  }

  /** Whether `writeId` is one of this instance's. */
  wrote(writeId: string): boolean {
    return writeId.startsWith(`${this.mark}.`);
  }
}

const idsByBackend = new WeakMap<StoreBackend, WriteIds>();

/** The write ids of `backend`: the same {@link WriteIds} (one mark) for the same backend instance, whoever asks. */
export function writeIdsOf(backend: StoreBackend): WriteIds {
  let ids = idsByBackend.get(backend);
  if (!ids) idsByBackend.set(backend, (ids = new WriteIds()));
  return ids;
}
