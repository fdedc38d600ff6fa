import { EventEmitter } from 'node:events';
import type { Pool } from 'pg';
import { PostgresCalls } from '../../lib/backends/postgres/postgres-calls';
import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../lib/core/errors/store-unavailable.error';

/** How a failed statement is reported: never sent (it did not happen) against lost under way (unknown outcome). */
describe('PostgresCalls failures', () => {
  /** A pool whose connections fail every statement with `error`, or that cannot connect at all (`atConnect`). */
  const failing = (error: Error & { code?: string }, atConnect = false) => new PostgresCalls(() => ({
    connect: () => (atConnect ? Promise.reject(error) : Promise.resolve({ query: () => Promise.reject(error), release: () => undefined, on: () => undefined, off: () => undefined })),
  }) as unknown as Pool, 1_000);
  const outcome = async (error: Error & { code?: string }, atConnect = false) => {
    const told: Array<boolean | undefined> = [];
    const thrown = await failing(error, atConnect).query('UPDATE x SET v = 1', [], 'write x', undefined, (late) => told.push(late === undefined ? undefined : true)).then(() => undefined, (e: unknown) => e);
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
    for (const [error, atConnect] of [
      [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), true],
      [new Error('timeout exceeded when trying to connect'), true],
      [Object.assign(new Error('the database system is shutting down'), { code: '57P03' }), true],
      [Object.assign(new Error('duplicate key'), { code: '23505' }), false],
    ] as const) {
      const { thrown, told } = await outcome(error, atConnect);
      expect(thrown).toBeInstanceOf(StoreUnavailableError);
      expect(thrown).not.toBeInstanceOf(StoreTimeoutError);
      expect(told).toEqual([]);
    }
  });

  it('runs its first use once on each new connection, before the statement; a failed one fails the call and drops the connection', async () => {
    const sent: string[] = [];
    const released: Array<Error | undefined> = [];
    const clients = [0, 1].map((n) => ({
      query: (text: string) => (sent.push(`${n}:${text}`), Promise.resolve({ rows: [], rowCount: 0 })),
      release: (error?: Error) => released.push(error),
      on: () => undefined,
      off: () => undefined,
    }));
    let next = 0;
    const pool = { connect: () => Promise.resolve(clients[next]) } as unknown as Pool;
    let refuse = false;
    const calls = new PostgresCalls(() => pool, 1_000, async (client) => {
      if (refuse) throw new Error('not the database the state was written in');
      await (client as unknown as (typeof clients)[0]).query('CHECK');
    });
    await calls.query('A', [], 'a');
    await calls.query('B', [], 'b');
    next = 1;
    refuse = true;
    await expect(calls.query('C', [], 'c')).rejects.toBeInstanceOf(StoreUnavailableError);
    refuse = false;
    await calls.query('D', [], 'd');
    expect(sent).toEqual(['0:CHECK', '0:A', '0:B', '1:CHECK', '1:D']);
    expect(released.map((e) => e?.message)).toEqual([undefined, undefined, 'not the database the state was written in', undefined]);
  });

  it('a connection whose socket fails while it is out of the pool does not end the process, and is not given out again', async () => {
    const released: Array<Error | undefined> = [];
    const client = Object.assign(new EventEmitter(), {
      // The socket is reset while the statement runs, whose answer had come: pg emits 'error' on the client.
      query: () => {
        client.emit('error', new Error('read ECONNABORTED'));
        return Promise.resolve({ rows: [], rowCount: 1 });
      },
      release: (error?: Error) => released.push(error),
    });
    const calls = new PostgresCalls(() => ({ connect: () => Promise.resolve(client) }) as unknown as Pool, 1_000);
    await expect(calls.query('UPDATE x SET v = 1', [], 'write x')).resolves.toMatchObject({ rowCount: 1 });
    expect(released.map((e) => e?.message)).toEqual(['read ECONNABORTED']);
    expect(client.listenerCount('error')).toBe(0);
  });
});
