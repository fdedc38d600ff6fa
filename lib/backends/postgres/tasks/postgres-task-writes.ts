import type { PostgresTaskTable } from '../postgres-backend';

/** One compare-and-set waiting for its statement. */
interface Write {
  readonly key: string;
  /** The stored text it must find (`null`: it creates the task). */
  readonly expected: string | null;
  readonly next: string;
  readonly timeoutMs: number | undefined;
  resolve(landed: boolean): void;
  reject(error: unknown): void;
}

/** Writes of one statement at most (the arrays' size stays well under what a statement carries). */
const MOST_PER_STATEMENT = 256;

/**
 * The task store's compare-and-sets on PostgreSQL, several in one statement: the writes asked for in one turn of the
 * event loop (a node's claims for its free slots, the completions of handlers that ended together, a burst of submits)
 * go out together, as one `UPDATE … FROM unnest(…)` for the replaces and one `INSERT … SELECT … ON CONFLICT DO
 * NOTHING` for the creates, each comparing every row with the exact text its writer read, as a single write does. One
 * statement is one round trip and one commit for all of them (on a durable server, one WAL flush instead of one each).
 *
 * A replace takes its rows with `FOR UPDATE SKIP LOCKED`: a row another node's write holds (its claim of the same task,
 * in flight) counts as changed at once, as it will be if that write lands, instead of waiting for its commit. Nodes
 * racing for the head of a backlog then lose a claim in no time and move to the next candidate (three worker
 * processes ran 322 tasks/s with the rows waited for, 1,166 with them skipped). A write refused so while the other
 * one then failed is a conflict like any other: its writer reads again.
 *
 * Each write lands or not on its own. A key is written at most once per statement (a second write of it waits for the
 * next), so what a statement returns tells every writer its own outcome. A statement that fails fails each of its
 * writes with its error (a lost answer: each outcome unknown, as for a single write); its deadline is the shortest
 * of its writes'.
 */
export class PostgresTaskWrites {
  private queued: Write[] = [];
  private scheduled = false;

  constructor(private readonly table: () => PostgresTaskTable) {}

  /** Writes `next` under `key` if the stored text is still `expected` (`null`: creates it); true if it landed. */
  write(key: string, expected: string | null, next: string, timeoutMs: number | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.queued.push({ key, expected, next, timeoutMs, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends what was asked for: a statement per kind, each with at most one write per key; the rest go next turn. */
  private flush(): void {
    this.scheduled = false;
    const keys = new Set<string>();
    const now: Write[] = [];
    const later: Write[] = [];
    for (const write of this.queued) {
      if (keys.has(write.key)) later.push(write);
      else {
        keys.add(write.key);
        now.push(write);
      }
    }
    this.queued = later;
    if (later.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    let table: PostgresTaskTable;
    try {
      table = this.table();
    } catch (error) {
      for (const write of now) write.reject(error);
      return;
    }
    const creates = now.filter((w) => w.expected === null);
    const replaces = now.filter((w) => w.expected !== null);
    for (let i = 0; i < creates.length; i += MOST_PER_STATEMENT) void this.send(table, 'create', creates.slice(i, i + MOST_PER_STATEMENT));
    for (let i = 0; i < replaces.length; i += MOST_PER_STATEMENT) void this.send(table, 'replace', replaces.slice(i, i + MOST_PER_STATEMENT));
  }

  private async send(table: PostgresTaskTable, kind: 'create' | 'replace', writes: Write[]): Promise<void> {
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
    const deadlines = writes.map((w) => w.timeoutMs).filter((ms): ms is number => ms !== undefined);
    const what = writes.length === 1 ? `${kind === 'create' ? 'create' : 'write'} task "${writes[0].key}"` : `${kind === 'create' ? 'create' : 'write'} ${writes.length} tasks`;
    try {
      const rows = await table.select<{ key: string }>(sql, values, what, deadlines.length > 0 ? Math.min(...deadlines) : undefined);
      const landed = new Set(rows.map((row) => row.key));
      for (const write of writes) write.resolve(landed.has(write.key));
    } catch (error) {
      for (const write of writes) write.reject(error);
    }
  }
}
