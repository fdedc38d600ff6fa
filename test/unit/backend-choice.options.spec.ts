import type { StoreBackend } from '../../lib/store/store-backend';
import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { resolveGatekeeperOptions } from '../../lib/nest/options/gatekeeper-options.resolver';
import { createBackends, createTaskStore } from '../../lib/nest/gatekeeper-stores.factory';
import { TaskRecordStore } from '../../lib/store/tasks/task-record.store';
import { writeIdsOf } from '../../lib/store/write-ids';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { PostgresTaskStore } from '../../lib/backends/postgres/tasks/postgres-task.store';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { RedisTaskStore } from '../../lib/backends/redis/tasks/redis-task.store';
import { HazelcastTaskStore } from '../../lib/backends/hazelcast/tasks/hazelcast-task.store';
import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { InvalidInputError } from '../../lib/core/errors/invalid-input.error';

const every = (choice: unknown) => ({ permits: choice, presence: choice, schedules: choice, history: choice, tasks: choice });

describe('module options: the backend of each capability', () => {
  it('is Hazelcast for every capability by default, as before backends could be chosen', () => {
    expect(resolveGatekeeperOptions({}).backends).toEqual(every('hazelcast'));
  });

  it('takes `backend` for every capability and `backends` over it', () => {
    const durable = new MemoryBackend();
    expect(resolveGatekeeperOptions({ backend: 'memory', backends: { history: durable, schedules: 'hazelcast' } }).backends)
      .toEqual({ ...every('memory'), history: durable, schedules: 'hazelcast' });
    expect(resolveGatekeeperOptions({ backend: 'memory' }).backends).toEqual(every('memory'));
  });

  it.each([
    ['store', { store: 'memory' }],
    ['store', { store: new PermitRecordStore(new MemoryBackend()) }],
    ['membership.store', { membership: { store: {} } }],
    ['tasks.store', { tasks: { store: {} } }],
    ['schedules.store', { schedules: { store: {} } }],
    ['schedules.historyStore', { schedules: { historyStore: {} } }],
  ])('refuses %s, an option that is gone (storage is given as backend or backends only)', (option, options) => {
    expect(() => resolveGatekeeperOptions(options as never)).toThrow(new RegExp(`invalid ${option.replace('.', '\\.')}: is not an option`));
  });

  it.each([
    ['backend', { backend: 'mysql' }, /must be 'hazelcast', 'memory', 'postgres', 'redis' or a StoreBackend.*got 'mysql'/],
    ['postgres', { backend: 'postgres', postgres: 'postgres://x' }, /must be an object/],
    ['redis', { backend: 'redis', redis: 'redis://x' }, /must be an object/],
    ['backend', { backend: { open: () => undefined } }, /got an object without them \(open\)/],
    ['backends.jobs', { backends: { jobs: 'memory' } }, /not a capability with a backend of its own \(known: permits, presence, schedules, history, tasks\)/],
    ['backends.history', { backends: { history: 'mongodb' } }, /got 'mongodb'/],
    ['backends', { backends: 'memory' }, /must be an object/],
  ])('refuses a bad %s, naming it', (option, options, message) => {
    let thrown: unknown;
    try {
      resolveGatekeeperOptions(options as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidInputError);
    expect((thrown as InvalidInputError).message).toContain(option);
    expect((thrown as InvalidInputError).message).toMatch(message);
  });

  it('builds one backend per choice, shared by the capabilities that name it, and a connection only for Hazelcast', async () => {
    const durable = new MemoryBackend();
    const memoryOnly = createBackends(resolveGatekeeperOptions({ backend: 'memory', backends: { history: durable } }));
    expect(memoryOnly.connection).toBeUndefined();
    // A memory backend given is a cluster: the module runs on a node of its own of it.
    expect(memoryOnly.of.history).not.toBe(durable);
    expect((memoryOnly.of.history as MemoryBackend).records).toBe(durable.records);
    expect(memoryOnly.of.permits).toBeInstanceOf(MemoryBackend);
    expect(new Set([memoryOnly.of.permits, memoryOnly.of.presence, memoryOnly.of.schedules, memoryOnly.of.tasks]).size).toBe(1);

    const mixed = createBackends(resolveGatekeeperOptions({ backends: { schedules: 'memory' } }), {});
    expect(mixed.connection).toBeDefined();
    expect(mixed.of.permits).toBeInstanceOf(HazelcastBackend);
    expect(mixed.of.tasks).toBe(mixed.of.permits);
    expect(mixed.of.schedules).toBeInstanceOf(MemoryBackend);
  });

  it('joins one memory backend given to several modules as one node each, shared by the capabilities of a module', async () => {
    const cluster = new MemoryBackend();
    const options = resolveGatekeeperOptions({ backend: cluster });
    const [a, b] = [createBackends(options), createBackends(options)];
    expect(a.of.permits).not.toBe(b.of.permits);
    expect(new Set(Object.values(a.of)).size).toBe(1);
    const [nodeA, nodeB] = [a.of.permits, b.of.permits];
    // Each node its own write ids (one mark per backend instance): a feed leaving out one node's writes keeps the other's.
    expect(writeIdsOf(nodeA).wrote(writeIdsOf(nodeA).next())).toBe(true);
    expect(writeIdsOf(nodeB).wrote(writeIdsOf(nodeA).next())).toBe(false);
    // A node given is that node.
    const node = cluster.node();
    expect(createBackends(resolveGatekeeperOptions({ backend: node })).of.tasks).toBe(node);
  });

  it("takes the tasks' store from their backend when it offers one (StoreBackend.taskStore), else builds it over the contract", async () => {
    const offered = new TaskRecordStore(new MemoryBackend());
    const own = Object.assign(new MemoryBackend().node(), { taskStore: () => offered });
    expect(createTaskStore(createBackends(resolveGatekeeperOptions({ backend: own })))).toBe(offered);
    const plain = createTaskStore(createBackends(resolveGatekeeperOptions({ backend: 'memory' })));
    expect(plain).toBeInstanceOf(TaskRecordStore);
    expect(plain).not.toBe(offered);
  });

  it("is each of the library's backends' native task store, offered through the contract", () => {
    expect(new PostgresBackend({ connectionString: 'postgres://h/db' }).taskStore()).toBeInstanceOf(PostgresTaskStore);
    expect(new RedisBackend({ url: 'redis://h' }).taskStore()).toBeInstanceOf(RedisTaskStore);
    expect(new HazelcastBackend({}).taskStore()).toBeInstanceOf(HazelcastTaskStore);
    expect((new MemoryBackend() as StoreBackend).taskStore).toBeUndefined();
  });

  it('refuses an unknown key one level down, in postgres and redis, naming it and the known ones', () => {
    expect(() => resolveGatekeeperOptions({ backend: 'postgres', postgres: { connectionstring: 'postgres://h/db' } as never }))
      .toThrow('invalid postgres.connectionstring: is not an option (expected one of pool, connectionString, poolConfig');
    expect(() => resolveGatekeeperOptions({ backend: 'redis', redis: { URL: 'redis://h' } as never }))
      .toThrow('invalid redis.URL: is not an option (expected one of client, url, connection');
    expect(resolveGatekeeperOptions({ backend: 'postgres', postgres: { connectionString: 'postgres://h/db', schema: 'gk' } }).postgres.schema).toBe('gk');
  });

  it('names the PostgreSQL or Redis server start-up waits for, without the password, and where it came from', async () => {
    const target = async (options: Parameters<typeof resolveGatekeeperOptions>[0], env: NodeJS.ProcessEnv) =>
      createBackends(resolveGatekeeperOptions(options), env).target;
    const pg = await target({ backend: 'postgres' }, { GATEKEEPER_PG_URL: 'postgres://app:secret@db:5432/app' });
    expect(pg).toMatchObject({ name: 'PostgreSQL', address: 'postgres://app:***@db:5432/app', source: 'GATEKEEPER_PG_URL' });
    const redis = await target({ backend: 'redis', redis: { url: 'redis://:pw@cache:6379/2' } }, {});
    expect(redis).toMatchObject({ name: 'Redis', address: 'redis://:***@cache:6379/2', source: 'redis.url' });
    expect(await target({ backend: 'postgres', postgres: { poolConfig: { host: 'db', port: 5433, database: 'app' } } }, {}))
      .toMatchObject({ address: 'db:5433/app', source: 'postgres.poolConfig' });
    expect(await target({ backend: 'memory' }, {})).toBeUndefined();
    await expect(target({ backend: 'redis' }, {})).rejects.toThrow("a capability is on 'redis' but no connection is given: set redis.url, redis.connection or redis.client, or GATEKEEPER_REDIS_URL");
  });

  it('refuses a mistyped URL before anything connects, naming where it came from and showing it without its password', async () => {
    const made = (options: Parameters<typeof resolveGatekeeperOptions>[0], env: NodeJS.ProcessEnv) => () => createBackends(resolveGatekeeperOptions(options), env);
    // Typos node-postgres and ioredis would read as a host called `base` and a socket on a host called `redis`.
    expect(made({ backend: 'postgres' }, { GATEKEEPER_PG_URL: 'postgress//app:secret@db:5432/app' })).toThrow(
      expect.objectContaining({ field: 'GATEKEEPER_PG_URL', message: expect.stringContaining('must be a URL such as postgres://user:password@host:5432/database (or a socket folder starting with /), got "postgress//app:***@db:5432/app"') }),
    );
    expect(made({ backend: 'postgres', postgres: { connectionString: 'postgress://app:secret@db/app' } }, {})).toThrow(
      expect.objectContaining({ field: 'postgres.connectionString', message: expect.stringContaining('got "postgress://app:***@db/app"') }),
    );
    expect(made({ backend: 'redis' }, { GATEKEEPER_REDIS_URL: 'redis//:secret@cache:6379' })).toThrow(
      expect.objectContaining({ field: 'GATEKEEPER_REDIS_URL', message: expect.stringContaining('must be a URL such as redis://user:password@host:6379/0 (rediss:// for TLS, or a socket path starting with /), got "redis//:***@cache:6379"') }),
    );
    expect(made({ backend: 'redis', redis: { url: 'http://cache:6379' } }, {})).toThrow(expect.objectContaining({ field: 'redis.url' }));
    expect(made({ backend: 'redis', redis: { url: 'rediss://cache:6380' } }, {})).not.toThrow();
    expect(made({ backend: 'redis', redis: { url: 'cache:6379' } }, {})).not.toThrow();
    expect(made({ backend: 'postgres', postgres: { connectionString: '/var/run/postgresql app' } }, {})).not.toThrow();
    expect(made({ backend: 'postgres', postgres: { connectionString: 'postgresql://db/app' } }, {})).not.toThrow();
  });
});
