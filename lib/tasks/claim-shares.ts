/**
 * The last claims one node heard of (its own included), by the instance that made each: how much of the recent work
 * each node took. A node that took more than its share waits while the others claim, so nodes take turns in a burst
 * instead of the quickest one winning every race (see `TaskClaims`).
 *
 * The nodes counted are those with a claim among the last `size`: a node that stopped claiming (it died, or has no
 * free slot) drops out once `size` newer claims were made, and a node alone counts only itself, so it never holds
 * back. A claim told twice (a renewal, or its own landing before its event) counts once.
 */
export class ClaimShares {
  /** The claims heard, oldest first, as `id@epoch` and the instance that made it. */
  private readonly window: Array<{ readonly key: string; readonly instance: string }> = [];
  private readonly keys = new Set<string>();
  private readonly counts = new Map<string, number>();
  /** When this node last heard another node claim (its clock), `-Infinity` before it did. */
  private othersAt = -Infinity;

  constructor(
    private readonly self: string,
    private readonly size = 64,
  ) {}

  /** A claim of task `id` under `epoch` by `instance`, heard at `now`. */
  heard(id: string, epoch: number, instance: string, now: number): void {
    if (instance !== this.self) this.othersAt = Math.max(this.othersAt, now);
    const key = `${id}@${epoch}`;
    if (this.keys.has(key)) return;
    this.keys.add(key);
    this.window.push({ key, instance });
    this.counts.set(instance, (this.counts.get(instance) ?? 0) + 1);
    if (this.window.length <= this.size) return;
    const dropped = this.window.shift()!;
    this.keys.delete(dropped.key);
    const left = this.counts.get(dropped.instance)! - 1;
    if (left === 0) this.counts.delete(dropped.instance);
    else this.counts.set(dropped.instance, left);
  }

  /** When this node last heard another node claim; `-Infinity` if it never did. */
  get lastOthersClaim(): number {
    return this.othersAt;
  }

  /**
   * How many tasks this node may claim now without going past its share of the recent claims by more than one:
   * `Infinity` when no other node claimed lately. Among nodes that heard the same claims at least one may always
   * claim, since not all of them can be past an even share.
   */
  allowance(): number {
    const nodes = this.counts.size + (this.counts.has(this.self) ? 0 : 1);
    if (nodes <= 1) return Infinity;
    const own = this.counts.get(this.self) ?? 0;
    // The largest k with (own + k) * nodes <= window + k + nodes: one claim past an even share of the window with its own k.
    return Math.max(0, Math.floor((this.window.length + nodes - own * nodes) / (nodes - 1)));
  }
}
