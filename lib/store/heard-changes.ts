/** A mark to take before a read or a listing: its answer is taken into the view only if no removal was heard since. */
export type RemovalMark = ReadonlyMap<string, number>;

/** A mark to take before a full listing: removals counted per key, and the feed's sequence of changes. */
export interface ChangeMark {
  readonly removals: RemovalMark;
  readonly sequence: number;
  /** The keys the view held a value under when the mark was taken: only those can be found gone by the listing. */
  readonly held: ReadonlySet<string>;
}

/**
 * What the feed told of each key, counted, so that an answer that started before it is not taken into a view: removals
 * per key (a read or listing begun before one may predate it) and the sequence of every change heard (a listing begun
 * before one does not undo it). Bounded by the keys the store sent changes of.
 */
export class HeardChanges {
  /** How many removals of each key this node heard. */
  private readonly removals = new Map<string, number>();
  /** When (in the sequence of changes heard) the feed last changed each key. */
  private readonly heardAt = new Map<string, number>();
  private sequence = 0;

  /** The feed sent a value of `key`. */
  heard(key: string): void {
    this.heardAt.set(key, ++this.sequence);
  }

  /** The feed said `key` was removed. */
  removed(key: string): void {
    this.removals.set(key, (this.removals.get(key) ?? 0) + 1);
    this.heard(key);
  }

  /** A mark to take before a read (see {@link HeardChanges.removedSince}). */
  removalMark(): RemovalMark {
    return new Map(this.removals);
  }

  /** A mark to take before a full listing (see {@link HeardChanges.changedSince}). */
  changeMark(held: Iterable<string>): ChangeMark {
    return { removals: this.removalMark(), sequence: this.sequence, held: new Set(held) };
  }

  /** Whether a removal of `key` was heard since `mark` was taken. */
  removedSince(key: string, mark: RemovalMark): boolean {
    return (this.removals.get(key) ?? 0) !== (mark.get(key) ?? 0);
  }

  /** Whether the feed changed `key` since `mark` was taken. */
  changedSince(key: string, mark: ChangeMark): boolean {
    return (this.heardAt.get(key) ?? 0) > mark.sequence;
  }
}
