import { rowsOf } from '../../lib/fencing/executors/executor-input';

/*
 * The rows of what each tool answers a query with: the fence, and the library's writes in the application's
 * transaction, judge what they did by them (a compare-and-set landed when it returned its row).
 */
describe('rowsOf', () => {
  it('takes rows as each tool answers them', () => {
    const row = { key: 'k' };
    expect(rowsOf([row])).toEqual([row]); // pg's rows, Knex's, Prisma's, TypeORM's SELECT and INSERT
    expect(rowsOf({ rows: [row] })).toEqual([row]); // a pg result, Drizzle's, Kysely's
    expect(rowsOf([[row], [{ name: 'key' }]])).toEqual([row]); // mysql2's [rows, fields]
    expect(rowsOf([{ affectedRows: 1 }, undefined])).toEqual([]); // mysql2's write header
    expect(rowsOf([[row], 1])).toEqual([row]); // TypeORM's UPDATE or DELETE on PostgreSQL: [rows, count]
    expect(rowsOf([[], 0])).toEqual([]);
  });
});
