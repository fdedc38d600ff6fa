import Redis from 'ioredis';
import { StoreUnavailableError } from '../../lib/core/errors/store-unavailable.error';
import { WriteConflictError } from '../../lib/core/errors/write-conflict.error';
import { systemClock } from '../../lib/core/clock';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { RedisTaskStore } from '../../lib/backends/redis/tasks/redis-task.store';
import { TaskWorker } from '../../lib/tasks/task-worker';
import { RedisProcess } from '../support/redis-topology';

/*
 * A Redis server of this test's own that answers writes with an error of its own (`OOM` once `maxmemory` is reached
 * under `noeviction`): the call reached the server and was answered, so nothing is settled by reading back, and the
 * caller hears Redis's words at once, not a "conflict" after sixteen tries.
 */
describe('a Redis server that answers a write with an error', () => {
  let server: RedisProcess;
  let admin: Redis;
  beforeAll(async () => {
    server = await RedisProcess.start((port, dir) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]);
    admin = new Redis({ port: server.port, host: '127.0.0.1' });
  }, 30_000);
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  it('fails a submit with the server\'s own words after one call, and submits again once it takes writes', async () => {
    const url = `redis://127.0.0.1:${server.port}`;
    const mapPrefix = 'answered';
    expect(await new RedisBackend({ url, mapPrefix }).declareFresh()).toBe(true);
    const store = new RedisTaskStore(new RedisBackend({ url, mapPrefix, callTimeoutMs: 5_000, onWarning: () => undefined }));
    await store.connect();
    try {
      const worker = new TaskWorker(store, { instance: 't/1', acquirer: 't' }, { clock: systemClock, clockSkewMs: 500 });
      await worker.submit({ type: 'mail', name: 'before' });
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');
      const calls = store.operationCount();
      const failure = await worker.submit({ type: 'mail', name: 'refused' }).then(() => undefined, (error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect(failure).not.toBeInstanceOf(WriteConflictError);
      expect((failure as Error).message).toMatch(/task "mail:refused".*OOM command not allowed/);
      // One call: the refused write, with no read-back and no retry.
      expect(store.operationCount() - calls).toBe(1);
      await admin.config('SET', 'maxmemory', '0');
      await expect(worker.submit({ type: 'mail', name: 'refused' })).resolves.toMatchObject({ id: 'mail:refused', state: 'pending' });
    } finally {
      await store.close();
    }
  }, 60_000);
});
