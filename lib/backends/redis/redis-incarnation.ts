import type { RedisLossCause } from './redis-backend.options';
import { KnownLoss } from '../../store/known-loss';

/** The part of every script's answer that says which store answered (see `redis-scripts.ts`). */
export interface IncarnationAnswer {
  /** The store's incarnation id. */
  readonly incarnation: string;
  /** Its write epoch. */
  readonly epoch: number;
  /** Since when (ms, the server's clock) it may have lost acknowledged writes; `undefined`: never. */
  readonly lostAt: number | undefined;
  /** Set when this call found a loss: why it counts as one, and the records it dropped (`<map> <key>`). */
  readonly found: { readonly why: RedisLossCause; readonly forgotten: readonly string[] } | undefined;
}

/** What the backend is told when Redis turns out to have lost writes. */
export interface IncarnationEvents {
  /**
   * The state may have lost acknowledged writes since `lostAt`: views must read again. Told once per loss on every
   * node that knew the store before; `found` is set on the node whose call found it.
   */
  lost(lostAt: number, found: { readonly why: RedisLossCause; readonly forgotten: readonly string[] } | undefined): void;
}

/**
 * What this node knows of the Redis it talks to: its incarnation id and the highest write epoch it saw, sent with
 * every call so the script finds a store that came back with less (see `redis-scripts.ts`), and since when it may
 * have lost writes. A loss later than the one known is told to {@link IncarnationEvents.lost} once.
 */
export class RedisIncarnation {
  private incarnation = '';
  private epoch = 0;
  private readonly loss: KnownLoss<NonNullable<IncarnationAnswer['found']>>;

  constructor(events: IncarnationEvents) {
    this.loss = new KnownLoss<NonNullable<IncarnationAnswer['found']>>((lostAt, found) => events.lost(lostAt, found));
  }

  /** What a call sends: the incarnation this node knows ('' if none) and the highest epoch it saw. */
  argv(): [string, string] {
    return [this.incarnation, String(this.epoch)];
  }

  /** Takes in one answer; returns since when the state may have lost writes (`undefined`: never). */
  observe(answer: IncarnationAnswer): number | undefined {
    this.incarnation = answer.incarnation;
    this.epoch = Math.max(this.epoch, answer.epoch);
    return this.loss.observe(answer.lostAt, answer.found);
  }
}
