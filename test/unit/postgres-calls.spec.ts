import type { Pool } from 'pg';
import { PostgresCalls } from '../../lib/backends/postgres/postgres-calls';
import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../lib/core/errors/store-unavailable.error';

/** How a failed statement is reported: never sent (it did not happen) against lost under way (unknown outcome). */
describe('PostgresCalls failures', () => {
  const failing = (error: Error & { code?: string }) => new PostgresCalls(() => ({ query: () => Promise.reject(error) }) as unknown as Pool, 1_000);
  const outcome = async (error: Error & { code?: string }) => {
    const told: Array<boolean | undefined> = [];
    const thrown = await failing(error).query('UPDATE x SET v = 1', [], 'write x', undefined, (late) => told.push(late === undefined ? undefined : true)).then(() => undefined, (e: unknown) => e);
    return { thrown, told };
  };

  it('a connection lost under a statement: outcome unknown (StoreTimeoutError), and the late outcome says it cannot tell', async () => {
    const { thrown, told } = await outcome(new Error('Connection terminated unexpectedly'));
    expect(thrown).toBeInstanceOf(StoreTimeoutError);
    expect(told).toEqual([undefined]);
    const reset = await outcome(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    expect(reset.thrown).toBeInstanceOf(StoreTimeoutError);
  });

  it('a statement never sent, or refused by the server: not written (StoreUnavailableError), no late outcome', async () => {
    for (const error of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new Error('timeout exceeded when trying to connect'),
      Object.assign(new Error('the database system is shutting down'), { code: '57P03' }),
      Object.assign(new Error('duplicate key'), { code: '23505' }),
    ]) {
      const { thrown, told } = await outcome(error);
      expect(thrown).toBeInstanceOf(StoreUnavailableError);
      expect(thrown).not.toBeInstanceOf(StoreTimeoutError);
      expect(told).toEqual([]);
    }
  });
});
