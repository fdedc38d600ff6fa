import type { CounterValue, Counters } from '../../store/counter';
import type { RecordCallOptions } from '../../store/record-map';
import type { PostgresCalls } from './postgres-calls';

/**
 * Counters in the `counters` table (`name` is `<prefix>.<counter>`): one `INSERT … ON CONFLICT DO UPDATE SET value =
 * value + 1 RETURNING value` per value, atomic on the server and kept across restarts with everything PostgreSQL
 * acknowledged, so a counter never goes back.
 */
export class PostgresCounters implements Counters {
  constructor(
    private readonly calls: PostgresCalls,
    /** The quoted schema. */
    private readonly schema: string,
    private readonly prefix: string,
  ) {}

  async next(name: string, options: RecordCallOptions = {}): Promise<CounterValue> {
    const sql =
      `INSERT INTO ${this.schema}.counters AS c (name, value) VALUES ($1, 1) ` +
      `ON CONFLICT (name) DO UPDATE SET value = c.value + 1 RETURNING value`;
    const result = await this.calls.query<{ value: string }>(sql, [`${this.prefix}.${name}`], `advance counter ${name}`, options.timeoutMs);
    return { value: Number(result.rows[0].value) };
  }

  async current(name: string, options: RecordCallOptions = {}): Promise<number> {
    const result = await this.calls.query<{ value: string }>(`SELECT value FROM ${this.schema}.counters WHERE name = $1`, [`${this.prefix}.${name}`], `read counter ${name}`, options.timeoutMs);
    return result.rows.length === 0 ? 0 : Number(result.rows[0].value);
  }
}
