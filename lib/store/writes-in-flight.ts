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
  /** One write per key is the rule, kept as is (an array only while several are out): no collection per write. */
  private readonly writing = new Map<string, OwnWrite<T> | Array<OwnWrite<T>>>();

  /** Tracks a write until {@link WritesInFlight.end}. */
  begin(key: string, raw: string, value: T): OwnWrite<T> {
    const own: OwnWrite<T> = { raw, value, absenceSeen: false };
    const writes = this.writing.get(key);
    if (writes === undefined) this.writing.set(key, own);
    else if (Array.isArray(writes)) writes.push(own);
    else this.writing.set(key, [writes, own]);
    return own;
  }

  /** The write's answer came (or it was settled): it is no longer in flight. */
  end(key: string, own: OwnWrite<T>): void {
    const writes = this.writing.get(key);
    if (writes === own) {
      this.writing.delete(key);
    } else if (Array.isArray(writes)) {
      const at = writes.indexOf(own);
      if (at >= 0) writes.splice(at, 1);
      if (writes.length === 0) this.writing.delete(key);
      else if (writes.length === 1) this.writing.set(key, writes[0]);
    }
  }

  /** Whether a write of `key` is in flight. */
  has(key: string): boolean {
    return this.writing.has(key);
  }

  /** The record was seen absent: every write of it in flight may have been removed, or come after a removal. */
  sawAbsence(key: string): void {
    for (const own of this.of(key)) own.absenceSeen = true;
  }

  /** A full listing lacked every key outside `present`: the writes in flight on those saw an absence. */
  sawAbsenceExcept(present: ReadonlySet<string>): void {
    for (const key of this.writing.keys()) if (!present.has(key)) this.sawAbsence(key);
  }

  /** The decoded value of a write in flight with exactly this text, if any. */
  valueOf(key: string, raw: string): T | undefined {
    for (const own of this.of(key)) if (own.raw === raw) return own.value;
    return undefined;
  }

  private of(key: string): ReadonlyArray<OwnWrite<T>> {
    const writes = this.writing.get(key);
    return writes === undefined ? [] : Array.isArray(writes) ? writes : [writes];
  }
}
