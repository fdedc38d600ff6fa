import { withDeadline } from '../../core/with-deadline';
import type { RedisClient } from './redis-backend.options';

/** What an eviction policy does to the library's keys, none of which has a TTL. */
export type EvictionVerdict = 'safe' | 'evicts' | 'evicts-once-limited' | 'unknown';

/**
 * `noeviction` refuses writes when full; a `volatile-*` policy evicts only keys with a TTL, and the library sets none
 * (expiry is kept in its own sorted sets), so neither drops its keys. An `allkeys-*` policy drops any key once
 * `maxmemory` is reached; with no `maxmemory` (0) nothing is evicted yet.
 */
export function evictionVerdict(policy: string, maxmemory: number): EvictionVerdict {
  if (policy === 'noeviction' || policy.startsWith('volatile-')) return 'safe';
  if (policy.startsWith('allkeys-')) return maxmemory > 0 ? 'evicts' : 'evicts-once-limited';
  return 'unknown';
}

/** Where the check's findings go: an evicting policy is an error, the rest a warning. */
export interface EvictionReports {
  error(message: string): void;
  warn(message: string): void;
}

const FIX = 'Set maxmemory-policy noeviction (writes then fail when Redis is full, and the library fails closed), or a volatile-* '
  + 'policy (volatile-lru, volatile-lfu, volatile-random, volatile-ttl: they evict only keys with a TTL, and the library '
  + 'sets none), or give the library a Redis of its own.';

/**
 * Reads Redis's eviction policy (`CONFIG GET maxmemory*`, or `INFO memory` where `CONFIG` is refused, as on managed
 * services) at open and on every reconnect (a failover or a restart may bring another configuration), and says what
 * it means for the library once per change: an evicting policy at ERROR, a policy it cannot judge or cannot read at
 * WARN, nothing for a safe one.
 */
export class RedisEvictionCheck {
  /** What was last said (or found safe): the same finding again is not said again. */
  private last?: string;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly reports: EvictionReports, private readonly timeoutMs: number) {}

  /** Checks the server `client` is connected to; checks in a row run one after the other. Never throws. */
  check(client: RedisClient): Promise<void> {
    this.running = this.running.then(() => this.checkOnce(client)).catch(() => undefined);
    return this.running;
  }

  private async checkOnce(client: RedisClient): Promise<void> {
    const read = await this.read(client);
    if (typeof read === 'string') return this.say('unreadable', 'warn', `Could not check Redis's maxmemory-policy (${read}): if Redis may `
      + 'evict keys (a maxmemory with an allkeys-* policy), it can delete the library\'s keys when full, and leases may be lost '
      + `and runs repeated or held back. Make sure it is noeviction or a volatile-* policy. ${FIX}`);
    const { policy, maxmemory } = read;
    const verdict = evictionVerdict(policy, maxmemory);
    if (verdict === 'safe') {
      this.last = 'safe';
      return;
    }
    if (verdict === 'evicts') {
      return this.say(`evicts ${policy}`, 'error', `Redis may evict the library's keys: its maxmemory-policy is ${policy} (maxmemory ${maxmemory} bytes), `
        + 'so when it is full it deletes keys of any kind, the library\'s too (semaphores and their permits, counters, its write '
        + 'epoch and incarnation). A permit evicted may be granted again while its holder still runs, and each eviction the '
        + `library finds is a loss of data: its semaphores wait out a recovery, so runs are repeated or held back. ${FIX}`);
    }
    if (verdict === 'evicts-once-limited') {
      return this.say(`limitless ${policy}`, 'warn', `Redis's maxmemory-policy is ${policy}: with no maxmemory set nothing is evicted now, `
        + 'but once a maxmemory is set Redis deletes keys of any kind when full, the library\'s too, and leases may be lost and '
        + `runs repeated or held back. ${FIX}`);
    }
    return this.say(`unknown ${policy}`, 'warn', `Redis's maxmemory-policy is ${policy}, which this version does not know: if it may evict `
      + `keys without a TTL, it can delete the library's keys when full, and leases may be lost and runs repeated or held back. ${FIX}`);
  }

  private say(finding: string, level: 'error' | 'warn', message: string): void {
    if (this.last === finding) return;
    this.last = finding;
    try {
      this.reports[level](message);
    } catch {
      // The report's failure is its receiver's.
    }
  }

  /** The policy and `maxmemory`, or why neither `CONFIG GET` nor `INFO memory` told them. */
  private async read(client: RedisClient): Promise<{ policy: string; maxmemory: number } | string> {
    let refused: string;
    try {
      const pairs = await withDeadline(client.call('CONFIG', 'GET', 'maxmemory*'), this.timeoutMs, 'read maxmemory-policy');
      const config = new Map<string, string>();
      if (Array.isArray(pairs)) for (let i = 0; i + 1 < pairs.length; i += 2) config.set(String(pairs[i]), String(pairs[i + 1]));
      const policy = config.get('maxmemory-policy');
      if (policy !== undefined) return { policy, maxmemory: Number(config.get('maxmemory') ?? 0) };
      refused = 'CONFIG GET maxmemory* answered no maxmemory-policy';
    } catch (error) {
      refused = `CONFIG GET refused: ${(error as Error).message}`;
    }
    try {
      const info = String(await withDeadline(client.call('INFO', 'memory'), this.timeoutMs, 'read INFO memory'));
      const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
      if (policy !== undefined) return { policy, maxmemory: Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? 0) };
      return `${refused}; INFO memory has no maxmemory_policy`;
    } catch (error) {
      return `${refused}; INFO memory refused: ${(error as Error).message}`;
    }
  }
}
