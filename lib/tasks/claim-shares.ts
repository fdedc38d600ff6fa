/**
 * The last claims one node heard of (its own included), by the instance that made each: how much of the recent work
 * each node took. A node that took more than its share waits while the others claim, so nodes take turns in a burst
 * instead of the quickest one winning every race (see `TaskClaims`).
 *
 * The nodes counted are those with a claim among the last `size`, less those whose last claim is over `activeMs`
 * old while others made `slack` claims since: a node that stopped claiming (it died, or has no free slot) drops
 * out, and a node alone counts only itself, so it never holds back. After a quiet spell nobody has claimed since,
 * so every node still counts when the next burst comes. A claim told twice (a renewal, or its own landing before its
 * event) counts once.
 */
export class ClaimShares {
  /** The claims heard, oldest first, as `id@epoch` and the instance that made it. */
  private readonly window: Array<{ readonly key: string; readonly instance: string }> = [];
  private readonly keys = new Set<string>();
  /** Claims in the window, and when the last was heard (this node's clock, and how many claims were heard then), by instance. */
  private readonly instances = new Map<string, { count: number; at: number; heard: number }>();
  /** Claims heard so far. */
  private claims = 0;
  /** When this node last heard another node claim, `-Infinity` before it did. */
  private othersAt = -Infinity;

  constructor(
    private readonly self: string,
    private readonly size = 256,
    /** Claims a node may make past an even share before it waits: enough to keep claiming while the others' claims are on their way. */
    private readonly slack = 8,
    private readonly activeMs = 1_000,
  ) {}

  /** A claim of task `id` under `epoch` by `instance`, heard at `now`. */
  heard(id: string, epoch: number, instance: string, now: number): void {
    const key = `${id}@${epoch}`;
    if (this.keys.has(key)) return;
    if (instance !== this.self) this.othersAt = Math.max(this.othersAt, now);
    this.keys.add(key);
    this.window.push({ key, instance });
    this.claims++;
    const counted = this.instances.get(instance);
    this.instances.set(instance, { count: (counted?.count ?? 0) + 1, at: Math.max(counted?.at ?? now, now), heard: this.claims });
    if (this.window.length <= this.size) return;
    const dropped = this.window.shift()!;
    this.keys.delete(dropped.key);
    const left = this.instances.get(dropped.instance)!;
    if (left.count === 1) this.instances.delete(dropped.instance);
    else left.count--;
  }

  /** The nodes counted now (see the class), this one first, then the others in the order they first claimed. */
  counting(now: number): string[] {
    const nodes = [this.self];
    for (const instance of this.instances.keys()) if (instance !== this.self && this.counted(instance, now)) nodes.push(instance);
    return nodes;
  }

  /** Whether `instance` counts among the nodes sharing the work: this node, or another that has not stopped claiming. */
  private counted(instance: string, now: number): boolean {
    const last = this.instances.get(instance);
    return instance === this.self || (last !== undefined && !(now - last.at > this.activeMs && this.claims - last.heard > this.slack));
  }

  /** When this node last heard another node claim; `-Infinity` if it never did. */
  get lastOthersClaim(): number {
    return this.othersAt;
  }

  /**
   * How many tasks this node may claim now without going past an even share of the recent claims (of the nodes
   * counted, see the class) by more than `slack`: `Infinity` when no other node claimed lately. Among nodes
   * that heard the same claims at least one may always claim (with any slack above 0), since not all of them can be
   * past an even share.
   */
  allowance(now: number): number {
    let nodes = 1;
    let total = 0;
    for (const [instance, { count }] of this.instances) {
      if (!this.counted(instance, now)) continue; // stopped claiming
      if (instance !== this.self) nodes++;
      total += count;
    }
    if (nodes <= 1) return Infinity;
    const own = this.instances.get(this.self)?.count ?? 0;
    // The largest k with own + k <= (total + k) / nodes + slack.
    return Math.max(0, Math.floor((total / nodes + this.slack - own) / (1 - 1 / nodes)));
  }
}
