/**
 * A map that keeps only recently used keys: at least the last `cap` keys set or read, never more than `2 * cap`.
 * For per-name state that is safe to forget, keyed by names callers may build from input.
 *
 * Two generations of plain maps: writes and hits go to the young one; when it is full, it becomes the old one and
 * the previous old one is dropped whole. Every operation is O(1). (A single insertion-ordered Map evicting its first
 * key is not: V8 leaves deleted slots in place, and each eviction walks them, which cost seconds per million names.)
 * Written here rather than taken from a package to keep the library's runtime dependencies at two.
 */
export class RecentMap<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();

  constructor(private readonly cap: number) {
    if (!Number.isInteger(cap) || cap < 1) throw new RangeError(`RecentMap cap must be a positive integer, got ${cap}`);
  }

  /** How many keys are kept now (at most twice the cap). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  has(key: K): boolean {
    return this.young.has(key) || this.old.has(key);
  }

  /** The value of `key`, which counts as a use of it. */
  get(key: K): V | undefined {
    if (this.young.has(key)) return this.young.get(key);
    if (!this.old.has(key)) return undefined;
    const value = this.old.get(key) as V;
    this.set(key, value);
    return value;
  }

  set(key: K, value: V): this {
    this.old.delete(key);
    this.young.set(key, value);
    if (this.young.size >= this.cap) {
      this.old = this.young;
      this.young = new Map();
    }
    return this;
  }

  delete(key: K): boolean {
    const young = this.young.delete(key);
    return this.old.delete(key) || young;
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
  }
}
