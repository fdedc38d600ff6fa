import type { FenceExecutor } from 'nestjs-gatekeeper/fencing';

/** A client of any tool that runs SQL with `$1` parameters on the connection of its transaction. */
export interface MyTransactionClient {
  run(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>>;
}

/** An executor of your own: fence() needs the dialect and a way to run SQL in your transaction. */
export function myExecutor(tx: MyTransactionClient): FenceExecutor {
  return { dialect: 'postgres', query: (sql, params) => tx.run(sql, [...params]) };
}
