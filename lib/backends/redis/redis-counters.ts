import type { CounterValue, Counters } from '../../store/counter';
import type { RecordCallOptions } from '../../store/record-map';
import type { RedisCalls } from './redis-calls';

/**
 * Counters in one Redis hash (`{<prefix>}:counters`), advanced by a script (`HINCRBY`) that checks the store's
 * incarnation first: after a loss a counter starts again at the time of the loss in microseconds, and none goes
 * below what this process saw of it, so a counter never goes back.
 */
export class RedisCounters implements Counters {
  /** The highest value of each counter this process saw. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly calls: RedisCalls) {}

  async next(name: string, options: RecordCallOptions = {}): Promise<CounterValue> {
    const floor = (this.seen.get(name) ?? 0) + 1;
    const answer = await this.calls.run<string>('next', [name, floor], `advance counter ${name}`, options.timeoutMs);
    const value = Number(answer.result);
    this.seen.set(name, Math.max(value, this.seen.get(name) ?? 0));
    return answer.lostAt === undefined ? { value } : { value, lostSince: answer.lostAt };
  }

  async current(name: string, options: RecordCallOptions = {}): Promise<number> {
    const { result } = await this.calls.run<string | null>('current', [name], `read counter ${name}`, options.timeoutMs);
    return result === null ? 0 : Number(result);
  }
}
