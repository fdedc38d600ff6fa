import { randomUUID } from 'node:crypto';

/**
 * A backend instance's write ids, `<mark>.<n>`: the mark is unique to the instance, so a value's `"writeId"` says
 * whether this instance wrote it (what a watch with `exceptOwn` leaves out, and how a lost answer is settled).
 * Every backend makes and tells them this one way (`StoreBackend.writeId`, `StoreBackend.wroteId`).
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
