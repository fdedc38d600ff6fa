import type { CounterValue, Counters } from '../../store/counter';
import type { RecordCallOptions } from '../../store/record-map';
import type { PostgresCalls } from './postgres-calls';

/**
 * Counters in the `counters` table (`name` is `<prefix>.<counter>`): one `INSERT … ON CONFLICT DO UPDATE SET value =
 * value + 1 RETURNING value` per value, atomic on the server and kept across restarts with everything PostgreSQL
 * acknowledged. A database found restored or failed over has every counter moved to the time of the loss in
 * microseconds (`check_incarnation`), a counter created after it starts there, and none goes below what this process
 * saw of it: so a counter never goes back.
 */
export class PostgresCounters implements Counters {
  /** The highest value of each counter this process saw. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly calls: PostgresCalls,
    /** The quoted schema. */
    private readonly schema: string,
    private readonly prefix: string,
  ) {}

  async next(name: string, options: RecordCallOptions = {}): Promise<CounterValue> {
    const lost = `(SELECT lost_at FROM ${this.schema}.incarnation WHERE id = 1)`;
    const sql =
      `INSERT INTO ${this.schema}.counters AS c (name, value) VALUES ($1, GREATEST($2::bigint, coalesce(${lost} * 1000, 1))) ` +
      `ON CONFLICT (name) DO UPDATE SET value = GREATEST(c.value + 1, $2::bigint) RETURNING value, ${lost} AS lost_at`;
    const floor = (this.seen.get(name) ?? 0) + 1;
    const result = await this.calls.query<{ value: string; lost_at: string | null }>(sql, [`${this.prefix}.${name}`, floor], `advance counter ${name}`, options.timeoutMs);
    const { value: text, lost_at: lostAt } = result.rows[0];
    const value = Number(text);
    this.seen.set(name, Math.max(value, this.seen.get(name) ?? 0));
    return lostAt === null ? { value } : { value, lostSince: Number(lostAt) };
  }

  async current(name: string, options: RecordCallOptions = {}): Promise<number> {
    const result = await this.calls.query<{ value: string }>(`SELECT value FROM ${this.schema}.counters WHERE name = $1`, [`${this.prefix}.${name}`], `read counter ${name}`, options.timeoutMs);
    return result.rows.length === 0 ? 0 : Number(result.rows[0].value);
  }
}
