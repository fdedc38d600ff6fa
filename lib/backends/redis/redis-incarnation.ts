import type { RedisLossCause, RedisLostData } from './redis-backend.options';
import { KnownLoss } from '../../store/known-loss';

/** The part of every script's answer that says which store answered (see `redis-script-prelude.ts`). */
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

/** What the node whose call found a loss knows of it: why, what it dropped, and the writes it had seen. */
export interface FoundLoss {
  readonly why: RedisLossCause;
  /** The records dropped as leases that may be stale (`<map> <key>`). */
  readonly forgotten: readonly string[];
  /**
   * Whether the store came back with every write this node had seen: it had seen some, and the store's write epoch
   * is at least the highest this node saw (writes land in order, so none before it is missing). Said of the writes of
   * this node's knowledge only: another node may have seen later ones.
   */
  readonly keptEveryWriteSeen: boolean;
}

/** What the backend is told when Redis turns out to have lost writes. */
export interface IncarnationEvents {
  /**
   * The state may have lost acknowledged writes since `lostAt`: views must read again. Told once per loss on every
   * node that knew the store before; `found` is set on the node whose call found it.
   */
  lost(lostAt: number, found: FoundLoss | undefined): void;
}

/**
 * What this node knows of the Redis it talks to: its incarnation id and the highest write epoch it saw, sent with
 * every call so the script finds a store that came back with less (see `redis-script-prelude.ts`), and since when it may
 * have lost writes. A loss later than the one known is told to {@link IncarnationEvents.lost} once.
 */
export class RedisIncarnation {
  private incarnation = '';
  private epoch = 0;
  private readonly loss: KnownLoss<FoundLoss>;

  constructor(events: IncarnationEvents) {
    this.loss = new KnownLoss<FoundLoss>((lostAt, found) => events.lost(lostAt, found));
  }

  /** What a call sends: the incarnation this node knows ('' if none) and the highest epoch it saw. */
  argv(): [string, string] {
    return [this.incarnation, String(this.epoch)];
  }

  /** Takes in one answer; returns since when the state may have lost writes (`undefined`: never). */
  observe(answer: IncarnationAnswer): number | undefined {
    const seen = this.epoch;
    this.incarnation = answer.incarnation;
    this.epoch = Math.max(this.epoch, answer.epoch);
    // The script tells a store behind this node ('behind') before one written by another server: any other cause means
    // its epoch was at least the one this node sent (the answer's epoch is raised to it, so cannot say).
    const found = answer.found && { ...answer.found, keptEveryWriteSeen: seen > 0 && !LOSES_SEEN_WRITES.has(answer.found.why) };
    return this.loss.observe(answer.lostAt, found);
  }
}

/** The causes that lose writes the finding node may have seen: the others are found only once its epoch was there. */
const LOSES_SEEN_WRITES: ReadonlySet<RedisLossCause> = new Set<RedisLossCause>(['empty', 'restarted', 'behind']);

/** What each cause of a loss means, in the report's words: what the backend can tell, and no more. */
const CAUSES: Readonly<Record<RedisLossCause, string>> = {
  empty: 'has no incarnation key: it lost the library\'s keys (a restart without persistence, a FLUSHALL or FLUSHDB, the keys '
    + 'evicted by its maxmemory-policy or deleted), or it is a new store nobody declared new (nestjs-gatekeeper --backend redis store init)',
  restarted: 'holds another incarnation of the library\'s state than the one the nodes knew: its keys were replaced (another '
    + 'store\'s data restored or copied in)',
  behind: 'has fewer writes than a node saw: a restart or a failover that lost the last ones, or the library\'s keys evicted '
    + '(maxmemory-policy) or deleted',
  'failed-over': 'holds state written by the primary it replicated (its master_replid2), under a new replication id: a replica '
    + 'promoted to primary, which may have missed the last writes',
  reloaded: 'restarted: it runs as another process (run_id) under a new replication id, with the state read back from its '
    + 'append-only file or snapshot (or another server started on a copy of them), which may have missed the writes after '
    + 'the last fsync (a clean SHUTDOWN loses none, but nothing Redis shows tells it from a crash)',
  replaced: 'holds state written under another replication id, by a server it neither replicated nor is known to be (a '
    + 'restart, a failover or a copy of the files; which one cannot be told), which may have had more writes',
};

/**
 * Whether a loss of data found by a `RedisBackend` is told as a restart (a WARN) rather than a loss (an ERROR): Redis
 * restarted from its append-only file or snapshot and came back with every write the node that found it had seen. A
 * clean `SHUTDOWN` comes back so, and nothing Redis shows tells it from a crash that lost nothing this node knew of.
 */
export function isRestartWithoutKnownLoss(report: RedisLostData): boolean {
  return report.cause === 'reloaded' && report.keptEveryWriteSeen;
}

/** One line saying what a loss of data found by a `RedisBackend` took (or, a restart that kept what it knew, did not). */
export function describeRedisLostData(report: RedisLostData): string {
  const { prefix, cause, lostAt, forgotten } = report;
  const shown = forgotten.slice(0, 20).join(', ') + (forgotten.length > 20 ? `, and ${forgotten.length - 20} more` : '');
  const permits = forgotten.length === 0 ? 'No permits were held in what it kept. ' : `Permits forgotten, granted again only after a recovery wait: ${shown}. `;
  const rest = 'Counters moved past anything they handed out; runtime schedules, history and tasks are as Redis kept them.';
  if (isRestartWithoutKnownLoss(report)) {
    return `Redis (keys {${prefix}}:*) restarted: it runs as another process (run_id) under a new replication id, with the state `
      + 'read back from its append-only file or snapshot, and it came back with every write this node had seen (a clean SHUTDOWN '
      + `loses none). Writes other nodes made after ${new Date(lostAt).toISOString()} cannot be checked from here, and nothing Redis shows `
      + `tells a clean SHUTDOWN from a crash, so what it held then waits as after a loss. ${permits}${rest}`;
  }
  return `Redis (keys {${prefix}}:*) ${CAUSES[cause]}. Writes it acknowledged before ${new Date(lostAt).toISOString()} may be lost. ${permits}${rest}`;
}
