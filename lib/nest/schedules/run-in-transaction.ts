import type { DurationInput } from '../../core/duration';
import { invalidDefinition } from '../../core/errors/input.errors';
import { fence } from '../../fencing/fence';
import type { FenceExecutor } from '../../fencing/fence-executor';
import type { HistoryRecorder } from '../../schedules/history-recorder';
import type { HistoryStore } from '../../schedules/history-store';
import { runContext, runsInContext } from '../../schedules/run/run-context';
import { failTransaction, type SqlTransaction } from '../../store/sql-transaction';

/** Options of `ScheduleService.completeRunIn`. */
export interface CompleteRunInOptions {
  /**
   * The resource the transaction's writes are fenced as (see `fence()`): the fence table's row that orders the
   * writes of successive holders. Default: the job's semaphore.
   */
  readonly resource?: string;
  /** The fence table, as `fence()` takes it. Default `gatekeeper_fences`. */
  readonly table?: string;
  /** The bound on waiting behind another holder's open transaction, as `fence()` takes it. Default 10 s. */
  readonly maxWait?: DurationInput;
  /**
   * Once fenced, the server ends this transaction if it sits idle this long (PostgreSQL's
   * `idle_in_transaction_session_timeout`, this transaction only), as `fence()` takes it. Off unless given.
   */
  readonly maxIdle?: DurationInput;
}

/** What {@link completeRunIn} stands on. */
export interface RunInTransactionParts {
  readonly recorder: HistoryRecorder;
  readonly history: HistoryStore;
  /**
   * Where the permits live when they are in the history's PostgreSQL database (the module's `'postgres'` backend
   * holds both): the permit is then checked on the database's clock, at the fence and again at `COMMIT`.
   */
  readonly permitsAt?: { readonly schema?: string; readonly mapPrefix?: string };
}

/**
 * Inside a `@ClusterSingleton` run: fences `transaction` with the run's permit and writes the run's history record,
 * `completed`, in it (see `ScheduleService.completeRunIn`). Everything it checks is checked before any statement; a
 * refusal, or anything else that fails once it began, leaves the transaction unable to commit, and throws.
 */
export async function completeRunIn(parts: RunInTransactionParts, transaction: SqlTransaction, options: CompleteRunInOptions = {}): Promise<void> {
  const current = runContext.getStore();
  const inContext = current && runsInContext.get(current);
  if (!inContext) throw invalidDefinition(undefined, 'completeRunIn', 'is called inside a @ClusterSingleton run (its method, or what it awaits)', 'job run');
  const { run, lease } = inContext;
  const scope = `run of ${run.job}`;
  if (!parts.history.inTransaction) throw invalidDefinition(undefined, 'transaction', "a run is recorded in your transaction when the run history is on PostgreSQL (backends: { history: 'postgres' })", scope);
  const history = parts.history.inTransaction(transaction);
  if (transaction.dialect !== 'postgres') throw invalidDefinition(undefined, 'transaction', `must be on the run history's PostgreSQL database, got a ${JSON.stringify(transaction.dialect)} one`, scope);
  // Checked above: a PostgreSQL executor of nestjs-gatekeeper/fencing.
  await fence(transaction as FenceExecutor, options.resource ?? run.semaphore, lease, {
    ...(parts.permitsAt && { checkLease: parts.permitsAt }),
    ...(options.table !== undefined && { table: options.table }),
    ...(options.maxWait !== undefined && { maxWait: options.maxWait }),
    ...(options.maxIdle !== undefined && { maxIdle: options.maxIdle }),
  });
  try {
    await parts.recorder.completeIn(history, run);
  } catch (error) {
    // The run's writes must not commit without its record.
    await failTransaction(transaction, error instanceof Error ? error.message : String(error));
    throw error;
  }
}
