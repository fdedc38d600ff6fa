import type { CounterValue, Counters } from '../../store/counter';
import type { RecordCallOptions } from '../../store/record-map';
import type { PostgresCalls } from './postgres-calls';
import type { IncarnationAnswer, PostgresIncarnation } from './postgres-incarnation';
import { DATABASE_NOW_MS } from './postgres-schema';

/**
 * Counters in the `counters` table (`name` is `<prefix>.<counter>`): one call of `next_counter` per value (an `INSERT
 * … ON CONFLICT DO UPDATE SET value = value + 1`, after the database's incarnation is checked in the same
 * transaction), atomic on the server and kept across restarts with everything PostgreSQL acknowledged. A database
 * found restored or failed over has every counter moved to the time of the loss in microseconds, a counter created
 * after it starts there, and none goes below what this process saw of it: so a counter never goes back.
 */
export class PostgresCounters implements Counters {
  /** The highest value of each counter this process saw. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly calls: PostgresCalls,
    /** The quoted schema. */
    private readonly schema: string,
    private readonly prefix: string,
    private readonly incarnation: PostgresIncarnation,
  ) {}

  async next(name: string, options: RecordCallOptions = {}): Promise<CounterValue> {
    const sql = `SELECT next, lost_at, forgotten FROM ${this.schema}.next_counter($1, $2::bigint, ${DATABASE_NOW_MS})`;
    const floor = (this.seen.get(name) ?? 0) + 1;
    const values = [`${this.prefix}.${name}`, floor];
    const result = await this.calls.query<{ next: string } & IncarnationAnswer>(sql, values, `advance counter ${name}`, options.timeoutMs);
    const row = result.rows[0];
    const lostSince = this.incarnation.observe(row);
    const value = Number(row.next);
    this.seen.set(name, Math.max(value, this.seen.get(name) ?? 0));
    return lostSince === undefined ? { value } : { value, lostSince };
  }

  async current(name: string, options: RecordCallOptions = {}): Promise<number> {
    const result = await this.calls.query<{ value: string }>(`SELECT value FROM ${this.schema}.counters WHERE name = $1`, [`${this.prefix}.${name}`], `read counter ${name}`, options.timeoutMs);
    return result.rows.length === 0 ? 0 : Number(result.rows[0].value);
  }
}
