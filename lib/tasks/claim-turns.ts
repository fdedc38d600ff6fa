import { ClaimShares } from './claim-shares';
import type { TaskClaim } from '../store/tasks/task';

/**
 * How long the others must have claimed nothing before a node past its share of the recent claims claims one batch
 * anyway (they died, have no free slot, or have not heard of the work yet), and how long until its next such batch.
 */
const HOLD_BACK_MS = 50;
/**
 * How long the next task in claim order may have waited before any node claims it, past its share or not. Turns share
 * a burst; work that waited this long is a backlog the others are not keeping up with (one of them may be slow, its
 * slots taken by long tasks, yet claim often enough to count), and holding back then would only slow the cluster down
 * to its slowest node.
 */
const BACKLOG_MS = 2_000;
/** A claim heard this long (plus the skew bound) after it was made is a renewal, not a claim. */
const RENEWAL_AFTER_MS = 1_000;
/** The recent claims a node's share is counted over. */
const SHARE_WINDOW = 256;

/**
 * When one node may claim, so that nodes take turns in a burst instead of the quickest one winning every race: it
 * hears the others' claims, and past its share of the recent ones (see {@link ClaimShares}) it claims no more while
 * they do. It claims again once their claims give it room (`heard` says so: wake it), or one batch once they claimed
 * nothing for {@link HOLD_BACK_MS} (they died, their slots are full, or they were not told of the work yet). A node
 * alone never waits.
 */
export class ClaimTurns {
  private readonly shares: ClaimShares;
  /** Past its share: the next claim by another node that gives it room wakes it. */
  private waiting = false;
  /** When it last claimed past its share because the others were quiet. */
  private quietBatchAt = -Infinity;

  constructor(
    private readonly self: string,
    /** The node's slots: it may claim two rounds past an even share, claiming on while the others' claims are on their way. */
    concurrency: number,
    /** The bound on clock skew between nodes: a claim heard over a second plus this after it was made is a renewal. */
    private readonly clockSkewMs = 0,
  ) {
    this.shares = new ClaimShares(self, SHARE_WINDOW, 2 * concurrency);
  }

  /** A claim of task `id` heard at `now` (another node's, or this node's own as it landed); true when it gives a waiting node its turn. */
  heard(id: string, claim: Pick<TaskClaim, 'epoch' | 'instance' | 'claimedAt'>, now: number): boolean {
    // A claim made long before it was heard is a renewal (or a stale event): no new work taken. Counted, it would keep a
    // node whose slots are full of long tasks among those claiming, and the others from ever looking quiet.
    if (now - claim.claimedAt > RENEWAL_AFTER_MS + this.clockSkewMs) return false;
    this.shares.heard(id, claim.epoch, claim.instance, now);
    if (!this.waiting || claim.instance === this.self || this.shares.allowance(now) === 0) return false;
    this.waiting = false;
    return true;
  }

  /**
   * How many claims this node may make at `now` (`Infinity`: no limit): as many as keep it within its share of the
   * recent claims, or one batch once the others were quiet. `settled` lets claims that wait unread on the node's
   * socket in before it concludes the others are quiet (its loop may have been busy, not they): it resolves after
   * them. A node told `0` waits, even with nothing in its list: the store may hold work its list does not show, which
   * it asks for once its turn comes. Whatever the shares, it may claim when the next task in claim order was submitted
   * at `headSubmittedAt` {@link BACKLOG_MS} or more ago.
   */
  async turn(now: () => number, settled: () => Promise<unknown>, headSubmittedAt?: number): Promise<number> {
    if (headSubmittedAt !== undefined && now() - headSubmittedAt >= BACKLOG_MS) {
      this.waiting = false;
      return Infinity;
    }
    let turn = this.allowed(now());
    if (turn === Infinity && this.shares.allowance(now()) === 0) {
      await settled();
      turn = this.allowed(now());
      if (turn === Infinity) this.quietBatchAt = now(); // one batch, then wait again
    }
    this.waiting = turn === 0;
    return turn;
  }

  /**
   * Which of the tasks nodes that hold the same list reach for is this node's to claim first: with others claiming
   * too, the tasks whose highest {@link rendezvous} score among the nodes counted now (see {@link ClaimShares}) is
   * this node's, so they claim different tasks of a burst instead of racing for the same ones; no `mine` when it
   * claims alone. `nodes`: how many claim now (this one included).
   */
  owner(now: number): { readonly nodes: number; readonly mine?: (id: string) => boolean } {
    const nodes = this.shares.counting(now);
    if (nodes.length <= 1) return { nodes: 1 };
    return {
      nodes: nodes.length,
      mine: (id) => {
        const own = rendezvous(this.self, id);
        for (let i = 1; i < nodes.length; i++) if (rendezvous(nodes[i], id) > own) return false;
        return true;
      },
    };
  }

  /** When a node that waits for its turn should look again, though no claim woke it; `undefined` when it does not wait. */
  wakeAt(): number | undefined {
    return this.waiting ? this.quietSince() + HOLD_BACK_MS : undefined;
  }

  private allowed(now: number): number {
    const allowance = this.shares.allowance(now);
    return allowance === 0 && now - this.quietSince() >= HOLD_BACK_MS ? Infinity : allowance;
  }

  /** Since when the others have been quiet, for this node past its share: their last claim, or its last batch past its share. */
  private quietSince(): number {
    return Math.max(this.shares.lastOthersClaim, this.quietBatchAt);
  }
}

/** A score of node `instance` for task `id` (32-bit FNV-1a of both): the node with the highest owns the task. */
export function rendezvous(instance: string, id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < instance.length; i++) hash = Math.imul(hash ^ instance.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ 0, 0x01000193);
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  // Mixed once more (FNV alone spreads the last characters poorly), then unsigned.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash >>> 0;
}
