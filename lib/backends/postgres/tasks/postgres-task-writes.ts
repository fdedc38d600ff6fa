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
 * event loop ({@link TurnBatches}) go out as one call of the schema's `replace_tasks` for the replaces and one of
 * `create_tasks` for the creates (migration 8: a loop of one-row statements whose plans are made once per connection),
 * each comparing every row with the exact text its writer read, as a single write does. One statement is one round
 * trip and one commit for all of them (on a durable server, one WAL flush instead of one each).
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
    // The schema's functions (migration 8): one-row statements on the primary key, their plans made once per connection.
    const sql = kind === 'create'
      ? `SELECT k AS key FROM ${table.schema}.create_tasks($1, $2, $3) k`
      : `SELECT k AS key FROM ${table.schema}.replace_tasks($1, $2, $3, $4) k`;
    const values = kind === 'create'
      ? [table.stored, writes.map((w) => w.key), writes.map((w) => w.next)]
      : [table.stored, writes.map((w) => w.key), writes.map((w) => w.expected), writes.map((w) => w.next)];
    const what = writes.length === 1 ? `${kind === 'create' ? 'create' : 'write'} task "${writes[0].key}"` : `${kind === 'create' ? 'create' : 'write'} ${writes.length} tasks`;
    const rows = await table.select<{ key: string }>(sql, values, what, timeoutMs);
    const landed = new Set(rows.map((row) => row.key));
    return writes.map((w) => landed.has(w.key));
  }
}
