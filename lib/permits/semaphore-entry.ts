import type { Permit } from './permit';
import type { SemaphoreDefinition } from './semaphore-definition';

/**
 * Everything the cluster keeps about one semaphore, in one entry, so that one compare-and-set covers the
 * definition and the permits together: a holder's refresh decided on an old definition conflicts with the edit
 * and is decided again.
 */
export interface SemaphoreEntry {
  /**
   * Grows by one with every write and never goes back: it orders what nodes see, and the write that grants a
   * permit gives it its fencing token. A new entry starts from the creator's clock in microseconds, so an entry
   * rebuilt after data loss starts above everything the lost one handed out (see `seedRevision`).
   */
  readonly revision: number;
  /** A nonce unique to the write that produced this entry; settles writes whose outcome was unknown. */
  readonly writeId: string;
  /** The definition, or `null` once removed (the entry stays, so tokens never go back). */
  readonly definition: SemaphoreDefinition | null;
  /** The highest fencing token ever granted for this semaphore (0 if none). */
  readonly lastToken: number;
  /** Permits as last written; some may have expired since. */
  readonly permits: readonly Permit[];
  /**
   * Recovery: the entry was rebuilt after its data may have been lost, and nothing is granted until this time
   * (the creator's clock; others add the skew bound), when every permit of the lost entry has lapsed.
   */
  readonly graceUntil?: number;
  /**
   * Recovery: since when the rebuilt entry's data may have been lost (the wait counts from there), and the
   * revision of the newest entry its rebuilder remembered (0: none). A node that knows a longer duration or a
   * newer definition extends the wait or puts the newer definition in, while the wait lasts.
   */
  readonly rebuilt?: { readonly lostSince: number; readonly fromRevision: number };
  /**
   * When a permit was last removed before it lapsed (released, withdrawn), or a lapsed one dropped (its
   * `expiresAt`): the latest end of any permit no longer in the entry, never going back (the remover's clock).
   * With the permits still listed it tells a fresh grant since when nobody could run (see `vacantSince`).
   * Absent when no permit was ever removed, or in entries written by versions before it.
   */
  readonly vacatedAt?: number;
  /**
   * What a capability keeps with the semaphore (an allocation's plan), written by compare-and-set together with
   * the permits. The permit rules never read it; it is lost with the entry like everything else.
   */
  readonly annex?: Readonly<Record<string, unknown>>;
  /**
   * The semaphore is moving between stores (`nestjs-gatekeeper store move`): nothing is granted or refreshed on this
   * entry. `arriving`: copied onto the store the deployment moves to, held until the store it comes from has no live
   * permit; `left`: on the store it moved away from, for good. Edits keep it; only the move writes or clears it.
   */
  readonly move?: SemaphoreMove;
}

/** Where a semaphore's entry stands in a move between stores (see {@link SemaphoreEntry.move}). */
export type SemaphoreMove =
  | { readonly state: 'arriving'; readonly from: string; readonly at: number }
  | { readonly state: 'left'; readonly to: string; readonly at: number };

/** Revisions (and so fencing tokens) of a new entry start at the clock in microseconds. */
export const REVISION_PER_MS = 1000;

/**
 * The first revision of a new entry: above `knownRevision` (the newest this node saw of an entry that may have
 * been lost) and above `(now + skewMs)` in microseconds. A lost entry started at its creator's clock in
 * microseconds and grew by one per write, far slower than one per microsecond, so its revisions stayed below its
 * creator's clock, which is within `skewMs` of this node's: the new entry starts above all of them.
 */
export function seedRevision(now: number, knownRevision = 0, skewMs = 0): number {
  return Math.max(Math.floor(now + skewMs) * REVISION_PER_MS, knownRevision + 1);
}
