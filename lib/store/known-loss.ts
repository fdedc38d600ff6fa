/**
 * What a node knows of its store's losses of data: since when the state may have lost acknowledged writes, as the
 * store's last answer said. The one home, for every backend that finds losses in its answers (PostgreSQL's
 * incarnation check, Redis's scripts), of when a loss is news: a later loss than the one known is told once; a loss
 * found before the node's first answer happened before it knew anything, so it is told only when this node's own
 * call found it (and dropped records: reported whatever the node knew).
 */
export class KnownLoss<Found = readonly string[]> {
  private known: number | undefined;
  private answered = false;

  /** @param lost - Told of a loss that is news: since when, and what this node's call found (if it found it). */
  constructor(private readonly lost: (lostAt: number, found: Found | undefined) => void) {}

  /**
   * Takes in one answer: since when the store says it may have lost writes (`undefined`: never), and what this call
   * dropped when it was the one that found the loss. Returns since when the state may have lost writes, as known now.
   */
  observe(lostAt: number | undefined, found: Found | undefined): number | undefined {
    const first = !this.answered;
    this.answered = true;
    if (lostAt === undefined) return this.known;
    const later = this.known === undefined || lostAt > this.known;
    this.known = Math.max(lostAt, this.known ?? lostAt);
    if ((later && !first) || found !== undefined) this.lost(this.known, found);
    return this.known;
  }
}
