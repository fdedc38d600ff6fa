/**
 * Fenced writes: the resource's side of a lease. `fence()`, called inside the transaction that is about to write,
 * records the lease's token as the highest the resource accepted, in a small table of yours, and refuses a holder
 * whose lease was taken over (`StaleFencingTokenError`): a frozen, cut-off or late holder cannot commit. One small
 * executor per tool runs it in your transaction; none loads its tool until it is called.
 *
 * @packageDocumentation
 */

export { fence, type FenceOptions } from './fencing/fence';
export type { FenceDialect, FenceExecutor } from './fencing/fence-executor';
export type { SqlTransaction } from './store/sql-transaction';
export { DEFAULT_FENCE_TABLE, fenceTableSql } from './fencing/fence-sql';
export type { FencingTokenSource } from './fencing/fencing-token.rules';
export type { DurationInput } from './core/duration';
// Its errors, and the base class of every error of the library (also in the root entry)
export { GatekeeperError } from './core/errors/gatekeeper.error';
export { StaleFencingTokenError } from './core/errors/stale-fencing-token.error';
export { FenceTableMissingError } from './core/errors/fence-table-missing.error';
export { FenceWaitTimeoutError } from './core/errors/fence-wait-timeout.error';

// Fenced HTTP calls: the caller's side (the receiving route's `@Fenced` is in the root entry)
export { FENCING_TOKEN_HEADER, fencedFetch, fencingHeaders } from './fencing/http/fencing-header';

// One executor per tool: each needs only the object you already have in your transaction.
export { pgExecutor, type PgQueryable } from './fencing/executors/pg.executor';
export { mysql2Executor, type Mysql2Queryable } from './fencing/executors/mysql2.executor';
export { typeormExecutor, type TypeormQueryable } from './fencing/executors/typeorm.executor';
export { prismaExecutor, type PrismaQueryable } from './fencing/executors/prisma.executor';
export { drizzleExecutor, type DrizzleQueryable } from './fencing/executors/drizzle.executor';
export { kyselyExecutor, type KyselyQueryable } from './fencing/executors/kysely.executor';
export { knexExecutor, type KnexQueryable } from './fencing/executors/knex.executor';
export { mikroOrmExecutor, type MikroOrmQueryable } from './fencing/executors/mikro-orm.executor';
