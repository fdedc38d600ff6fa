import { InvalidInputError, LeaseLostError } from '../../lib';
import { drizzleExecutor, fence, fenceTableSql, FenceTableMissingError, knexExecutor, kyselyExecutor, mikroOrmExecutor, mysql2Executor, pgExecutor, prismaExecutor, typeormExecutor, type FenceExecutor } from '../../lib/fencing';
import { tokenOf } from '../../lib/fencing/fencing-token.rules';

/** An executor that records what it was asked to run and answers as a fence that accepts. */
function recording(dialect: FenceExecutor['dialect'] = 'postgres'): FenceExecutor & { statements: string[] } {
  const statements: string[] = [];
  return { dialect, statements, query: async (sql) => (statements.push(sql), [{ token: 1, reason: null, guarded: true }]) };
}

describe('fence() input', () => {
  it.each([
    ['resource', '', 5, undefined, 'must be a non-empty string'],
    ['resource', 'a\u0000b', 5, undefined, 'must not contain control characters (U+0000 at index 1)'],
    ['resource', 'x'.repeat(192), 5, undefined, 'must be at most 191 characters, got 192'],
    ['lease', 'invoices', 0, undefined, 'the token must be a whole number from 1 up, got 0 (0: the lease carries no token'],
    ['lease', 'invoices', -3, undefined, 'got -3'],
    ['lease', 'invoices', 1.5, undefined, 'got 1.5'],
    ['lease', 'invoices', Number.NaN, undefined, 'got NaN'],
    ['lease', 'invoices', '5' as unknown as number, undefined, 'must be a lease of this library or a token, got 5'],
    ['lease', 'invoices', { fencingToken: 2 ** 60 }, undefined, 'its fencingToken must be a whole number from 1 up'],
    ['table', 'invoices', 5, 'fences; DROP TABLE invoices', 'must be a table name'],
    ['table', 'invoices', 5, 'a.b.c', 'must be a table name'],
  ] as const)('a bad %s (%j) is refused before any statement', async (field, resource, lease, table, reason) => {
    const executor = recording();
    const error = await fence(executor, resource, lease as never, table === undefined ? {} : { table }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ of: 'fence', field });
    expect((error as Error).message).toContain(`Invalid fence.${field}: `);
    expect((error as Error).message).toContain(reason);
    expect(executor.statements).toEqual([]);
  });

  it('an executor of another dialect is refused before any statement', async () => {
    const executor = { ...recording(), dialect: 'sqlite' as never };
    await expect(fence(executor, 'invoices', 5)).rejects.toThrow("Invalid fence.executor: must be a FenceExecutor with a dialect of 'postgres' or 'mysql', got \"sqlite\"");
  });

  it('a lease this node knows it lost throws LeaseLostError before any statement', async () => {
    const executor = recording();
    const lost = new LeaseLostError('permit', 'billing', 'it expired', 'Permit of "billing" is lost: it expired');
    const lease = { permit: { fencingToken: 12 }, assertValid: () => { throw lost; } };
    await expect(fence(executor, 'invoices', lease)).rejects.toBe(lost);
    const resources = { epochOf: (r: string) => (r === 'shard-1' ? 4 : undefined), assertOwned: () => { throw lost; } };
    await expect(fence(executor, 'shard-1', resources)).rejects.toBe(lost);
    await expect(fence(executor, 'shard-2', resources)).rejects.toThrow('Invalid fence.lease: this node does not own "shard-2" in that allocation');
    expect(executor.statements).toEqual([]);
  });

  it('same-database mode is refused before any statement on MySQL, for a lease that is no permit, and with a bad schema or prefix', async () => {
    const permit = { semaphore: 'billing', fencingToken: 5 };
    const cases: Array<[FenceExecutor & { statements: string[] }, unknown, object, string]> = [
      [recording('mysql'), permit, { checkLease: true }, 'Invalid fence.checkLease: checks a permit kept in this PostgreSQL database'],
      [recording(), 5, { checkLease: true }, 'Invalid fence.lease: checkLease checks a permit: pass the PermitLease or the Permit'],
      [recording(), { epoch: 5 }, { checkLease: true }, 'Invalid fence.lease: checkLease checks a permit'],
      [recording(), permit, { checkLease: { schema: 'gk"; DROP' } }, 'Invalid fence.checkLease.schema: must be a schema name'],
      [recording(), permit, { checkLease: { mapPrefix: '' } }, 'Invalid fence.checkLease.mapPrefix: must be a non-empty string'],
    ];
    for (const [executor, lease, options, message] of cases) {
      await expect(fence(executor, 'invoices', lease as never, options)).rejects.toThrow(message);
      expect(executor.statements).toEqual([]);
    }
  });

  it('same-database mode reads the permit first, from the backend\'s table of its map', async () => {
    const executor = recording();
    await fence(executor, 'invoices', { permit: { semaphore: 'billing', fencingToken: 5 }, assertValid: () => undefined }, { checkLease: { mapPrefix: 'app' } });
    expect(executor.statements[0]).toContain('FROM "gatekeeper".records WHERE map = a.map AND key = a.key FOR KEY SHARE');
    expect(executor.statements[0]).toContain("(p.value ->> 'expiresAt')::double precision > extract(epoch from clock_timestamp()) * 1000");
    expect(executor.statements[1]).toContain('INSERT INTO "gatekeeper_fences"');
  });

  it('a table name schema-qualified is quoted part by part', async () => {
    const executor = recording();
    await fence(executor, 'invoices', 5, { table: 'app.fences' });
    expect(executor.statements[0]).toContain('INSERT INTO "app"."fences" AS f');
    expect(fenceTableSql('mysql', 'app.fences')).toContain('CREATE TABLE IF NOT EXISTS `app`.`fences`');
  });

  it('a missing table is FenceTableMissingError naming the command, as PostgreSQL, MySQL and the tools report it', async () => {
    const failing = (error: unknown): FenceExecutor => ({ dialect: 'postgres', query: async () => { throw error; } });
    const pgError = Object.assign(new Error('relation "gatekeeper_fences" does not exist'), { code: '42P01' });
    const typeorm = Object.assign(new Error('query failed'), { driverError: pgError });
    const prisma = Object.assign(new Error('Raw query failed'), { code: 'P2010', meta: { code: '42P01' } });
    const drizzle = new Error('Failed query', { cause: pgError });
    for (const error of [pgError, typeorm, prisma, drizzle]) {
      const thrown = await fence(failing(error), 'invoices', 5).catch((e: unknown) => e);
      expect(thrown).toBeInstanceOf(FenceTableMissingError);
      expect((thrown as Error).message).toBe('The fence table "gatekeeper_fences" does not exist in this PostgreSQL database: create it with the SQL that `npx nestjs-gatekeeper fencing sql --dialect postgres` prints (in a migration of yours), then retry');
    }
    const mysqlError = Object.assign(new Error("Table 'app.gatekeeper_fences' doesn't exist"), { code: 'ER_NO_SUCH_TABLE', errno: 1146 });
    await expect(fence({ dialect: 'mysql', query: async () => { throw mysqlError; } }, 'invoices', 5)).rejects.toBeInstanceOf(FenceTableMissingError);
    // Any other failure is the tool's own, as it was.
    const other = new Error('connection reset');
    await expect(fence(failing(other), 'invoices', 5)).rejects.toBe(other);
  });
});

describe('the token of each lease', () => {
  it('is the permit\'s fencingToken, a leadership\'s or a task run\'s epoch, a resource\'s epoch, or the number given', () => {
    const check = () => undefined;
    expect(tokenOf(7, 'r')).toEqual({ token: 7 });
    expect(tokenOf({ fencingToken: 8 }, 'r')).toEqual({ token: 8 });
    expect(tokenOf({ permit: { fencingToken: 9 }, assertValid: check }, 'r')).toMatchObject({ token: 9 });
    expect(tokenOf({ epoch: 10, assertValid: check }, 'r')).toMatchObject({ token: 10 });
    expect(tokenOf({ epoch: 11 }, 'r')).toEqual({ token: 11 });
    expect(tokenOf({ epochOf: () => 12, assertOwned: check }, 'r')).toMatchObject({ token: 12 });
  });
});

describe('the executors refuse what would run outside the transaction', () => {
  const query = async () => ({ rows: [] });
  it.each([
    ['pgExecutor', () => pgExecutor({ query, totalCount: 0, idleCount: 0 } as never), 'got a Pool'],
    ['mysql2Executor', () => mysql2Executor({ query, getConnection: () => undefined } as never), 'got a Pool'],
    ['typeormExecutor', () => typeormExecutor({ query, connection: { options: { type: 'postgres' } } }), 'is in no transaction'],
    ['typeormExecutor', () => typeormExecutor({ query, connection: { options: { type: 'sqlite' } } }), 'fences PostgreSQL, MySQL and MariaDB, got a data source of type "sqlite"'],
    ['knexExecutor', () => knexExecutor({ raw: query, client: { dialect: 'postgresql' } }), 'outside a transaction'],
    ['kyselyExecutor', () => kyselyExecutor({ executeQuery: query, isTransaction: false }), 'outside a transaction'],
    ['drizzleExecutor', () => drizzleExecutor({ execute: query } as never), 'outside a transaction'],
    ['prismaExecutor', () => prismaExecutor({ $queryRawUnsafe: query, $executeRawUnsafe: query, $connect: query } as never), 'got the PrismaClient itself'],
    ['mikroOrmExecutor', () => mikroOrmExecutor({ execute: query, isInTransaction: () => false, getPlatform: () => ({}) }), 'is in no transaction'],
  ])('%s: %s', (_name, make, message) => {
    expect(make).toThrow(message);
  });
});
