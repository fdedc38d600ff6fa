import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { CorruptStateError } from '../../core/errors/corrupt-state.error';
import { StoreTimeoutError } from '../../core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../core/errors/store-unavailable.error';
import { withDeadline } from '../../core/with-deadline';

/** Errors of a statement that never reached the server: no connection could be made for it. */
const NOT_SENT = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|timeout exceeded when trying to connect|Cannot use a pool after calling end/;

/**
 * Every statement the PostgreSQL backend sends: through the pool, with the caller's deadline (the backend's call
 * timeout by default), counted, and failures mapped fail-closed. A statement past its deadline may still commit on
 * the server: a write's late answer is handed to `lateOutcome`. Each connection the pool makes runs `firstUse` before
 * its first statement (the backend checks there that the database is still the one its state was written in).
 */
export class PostgresCalls {
  private count = 0;
  /** Whether the last statement failed for want of the server (not for its SQL). */
  private unreachable = false;
  /** The connections `firstUse` ran on. */
  private readonly ready = new WeakSet<PoolClient>();

  constructor(
    private readonly pool: () => Pool,
    private readonly timeoutMs: number,
    private readonly firstUse?: (client: PoolClient) => Promise<void>,
  ) {}

  /** Runs one statement; rejects with `StoreUnavailableError` (`StoreTimeoutError` past the deadline). */
  query<R extends QueryResultRow>(text: string, values: readonly unknown[], what: string, timeoutMs?: number, lateOutcome?: (result: QueryResult<R> | undefined) => void): Promise<QueryResult<R>> {
    this.count++;
    let sent: Promise<QueryResult<R>>;
    try {
      sent = this.run<R>(this.pool(), text, values as unknown[]);
    } catch (error) {
      return Promise.reject(this.failure(error, what));
    }
    return withDeadline(sent, timeoutMs ?? this.timeoutMs, what).then(
      (result) => {
        this.unreachable = false;
        return result;
      },
      (error: unknown) => {
        const failure = this.failure(error, what);
        if (failure instanceof StoreTimeoutError && lateOutcome) {
          // Past the deadline the statement still runs and its answer may come; a connection lost under it tells none.
          if (error instanceof StoreTimeoutError) void sent.then((late) => lateOutcome(late), () => lateOutcome(undefined));
          else lateOutcome(undefined);
        }
        throw failure;
      },
    );
  }

  /** Runs one statement on a connection of `pool`, after `firstUse` when the connection is new. */
  private async run<R extends QueryResultRow>(pool: Pool, text: string, values: unknown[]): Promise<QueryResult<R>> {
    const client = await pool.connect();
    // A connection that fails while it is out of the pool emits 'error' (its socket reset between two statements);
    // unheard, that would end the process. The statement under way, or the next, fails with it; as pg's pool.query does.
    let broken: Error | undefined;
    const onError = (error: Error) => (broken ??= error);
    client.on('error', onError);
    try {
      if (this.firstUse && !this.ready.has(client)) {
        await this.firstUse(client);
        this.ready.add(client);
      }
      const result = await client.query<R>(text, values);
      client.release(broken);
      return result;
    } catch (error) {
      // As pg's pool.query does: a connection a statement failed on is not given out again.
      client.release(error as Error);
      throw error;
    } finally {
      client.off('error', onError);
    }
  }

  /** Statements sent so far. */
  operations(): number {
    return this.count;
  }

  /** Whether the last statement reached the server (or none was sent yet). */
  reachable(): boolean {
    return !this.unreachable;
  }

  private failure(error: unknown, what: string): Error {
    if (error instanceof StoreUnavailableError || error instanceof CorruptStateError) return error;
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown } | null)?.code;
    const sqlState = typeof code === 'string' && /^[0-9A-DF-Z][0-9A-Z]{4}$/.test(code) ? code : undefined;
    // An SQLSTATE of class 08 (connection), 57 (operator intervention: shutdown, cancel) or 53 (resources), or a
    // socket error: the server could not be reached or gave up. Anything else reached it.
    if (sqlState === undefined || /^(08|57|53)/.test(sqlState)) this.unreachable = true;
    // The statement was never sent (no connection could be made, the server refused it): it did not happen. A
    // connection lost while it ran, without an answer, may have committed it: its outcome is unknown.
    if (sqlState === undefined && !NOT_SENT.test(`${String(code)} ${message}`)) {
      return new StoreTimeoutError(`PostgreSQL call failed (${what}), its outcome unknown: ${message}`, { cause: error });
    }
    return new StoreUnavailableError(`PostgreSQL call failed (${what}): ${message}`, { cause: error });
  }
}
