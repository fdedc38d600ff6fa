import { KnownLoss } from '../../store/known-loss';
import type { PostgresLostData } from './postgres-backend.options';

/** One answer of `check_incarnation` (see `postgres-schema.ts`). */
export interface IncarnationAnswer {
  /** Since when (epoch ms, as text) the state may have lost acknowledged writes; `null`: never. */
  readonly lost_at: string | number | null;
  /** The records the call dropped (`<map> <key>`) when it was the one that found the restore; else `null`. */
  readonly forgotten: readonly string[] | null;
  /** The oid of the `records` table the call checked (a counter's advance does not say). */
  readonly records_oid?: string | number | null;
}

/** What the backend is told when the database turns out to have lost writes. */
export interface IncarnationEvents {
  /**
   * The state may have lost acknowledged writes since `lostAt` (a restore, a failover): views must read again. Told
   * once per loss, on every node; `forgotten` is set on the one node whose check dropped the records.
   */
  lost(lostAt: number, forgotten: readonly string[] | undefined): void;
}

/**
 * What this node knows of the database's incarnation: since when its state may have lost acknowledged writes, as
 * the last check said (each new connection is checked before its first statement, and the change feed checks every
 * few seconds). A loss later than the one known is told to {@link IncarnationEvents.lost} once.
 */
export class PostgresIncarnation {
  private readonly loss: KnownLoss;
  private records: number | undefined;

  constructor(events: IncarnationEvents) {
    this.loss = new KnownLoss((lostAt, forgotten) => events.lost(lostAt, forgotten));
  }

  /** Takes in one check's answer; returns since when the state may have lost writes (`undefined`: never). */
  observe(answer: IncarnationAnswer): number | undefined {
    if (answer.records_oid !== undefined && answer.records_oid !== null) this.records = Number(answer.records_oid);
    return this.loss.observe(answer.lost_at === null ? undefined : Number(answer.lost_at), answer.forgotten ?? undefined);
  }

  /**
   * Whether rows read from the table with oid `tableoid` are from the database last checked: a logical restore into
   * the same server makes the table anew, under connections that are not new.
   */
  checkedTable(tableoid: number): boolean {
    return this.records === tableoid;
  }
}

/** One line saying what a loss of data found by a `PostgresBackend` took. */
export function describeLostData({ schema, lostAt, forgotten }: PostgresLostData): string {
  const shown = forgotten.slice(0, 20).join(', ') + (forgotten.length > 20 ? `, and ${forgotten.length - 20} more` : '');
  return `PostgreSQL schema "${schema}" is not in the database its state was written in (restored from a backup, or a `
    + `replica promoted): writes it acknowledged before ${new Date(lostAt).toISOString()} may be lost. `
    + (forgotten.length === 0 ? 'No permits were held in it. ' : `Permits forgotten, granted again only after a recovery wait: ${shown}. `)
    + 'Counters moved past anything they handed out; runtime schedules, history and tasks are as restored.';
}
