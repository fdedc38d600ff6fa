/** A write of this node's in flight: what it writes, and whether the record was seen absent meanwhile. */
export interface OwnWrite<T> {
  readonly raw: string;
  readonly value: T;
  absenceSeen: boolean;
}

/**
 * This node's writes in flight on a record map, by key, until their answer comes (even past their call's deadline):
 * what a view needs so that neither a late answer nor an early read puts back a value the store no longer has. An
 * absence of the record seen while a write is out marks it, and its answer is then not taken in (see
 * `RecordView.landed`); the feed's copy of a write is recognised by its exact text and not decoded again.
 */
export class WritesInFlight<T> {
  private readonly writing = new Map<string, Set<OwnWrite<T>>>();

  /** Tracks a write until {@link WritesInFlight.end}. */
  begin(key: string, raw: string, value: T): OwnWrite<T> {
    const own: OwnWrite<T> = { raw, value, absenceSeen: false };
    const writes = this.writing.get(key);
    if (writes) writes.add(own);
    else this.writing.set(key, new Set([own]));
    return own;
  }

  /** The write's answer came (or it was settled): it is no longer in flight. */
  end(key: string, own: OwnWrite<T>): void {
    const writes = this.writing.get(key);
    if (writes?.delete(own) && writes.size === 0) this.writing.delete(key);
  }

  /** Whether a write of `key` is in flight. */
  has(key: string): boolean {
    return this.writing.has(key);
  }

  /** The record was seen absent: every write of it in flight may have been removed, or come after a removal. */
  sawAbsence(key: string): void {
    for (const own of this.writing.get(key) ?? []) own.absenceSeen = true;
  }

  /** A full listing lacked every key outside `present`: the writes in flight on those saw an absence. */
  sawAbsenceExcept(present: ReadonlySet<string>): void {
    for (const [key, writes] of this.writing) if (!present.has(key)) for (const own of writes) own.absenceSeen = true;
  }

  /** The decoded value of a write in flight with exactly this text, if any. */
  valueOf(key: string, raw: string): T | undefined {
    for (const own of this.writing.get(key) ?? []) if (own.raw === raw) return own.value;
    return undefined;
  }
}
