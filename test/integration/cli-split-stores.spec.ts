import { Injectable } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { ClusterSingleton } from '../../lib';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { systemClock } from '../../lib/core/clock';
import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { writeMoveMark } from '../../lib/store/store-moves';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { cli, CLI_BIN } from '../support/cli-process';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';
import { uniquePrefix } from '../support/test-cluster';

@Injectable()
class BillingJobs {
  @ClusterSingleton('billing', '1m')
  async charge(): Promise<void> {}
}

/**
 * A team moved its permits to Redis and kept the rest on PostgreSQL (`backend: 'postgres', backends: { permits:
 * 'redis' }`). The live node announces where each capability keeps its state; the CLI (the built binary) reads that
 * and sends each command to the store its capability lives on, whichever store it was pointed at, and refuses rather
 * than edit the old store when it was not given the new one.
 */
describe('the CLI with split stores (permits on Redis, the rest on PostgreSQL)', () => {
  const pgUrl = testPostgresUrl();
  const redisUrl = testRedisUrl();
  const prefix = uniquePrefix('split');
  const both = { GATEKEEPER_BACKEND: undefined, GATEKEEPER_PG_URL: pgUrl, GATEKEEPER_REDIS_URL: redisUrl, GATEKEEPER_HZ_MEMBERS: undefined };
  const pgOnly = { ...both, GATEKEEPER_REDIS_URL: undefined };
  const run = (env: NodeJS.ProcessEnv, ...args: string[]) => cli(['--map-prefix', prefix, '--connect-timeout', '10s', ...args], env);
  let node: TestNode | undefined;
  let oldPermits: PermitRecordStore | undefined;

  /** The definition of billing the old store (PostgreSQL's permits, which no node reads any more) still keeps. */
  const oldBilling = async () => (await oldPermits!.list()).find((stored) => stored.name === 'billing')?.entry.definition;

  beforeAll(async () => {
    if (!existsSync(CLI_BIN)) throw new Error(`${CLI_BIN} is missing: run npm run build first (npm test does)`);
    // Before the move: billing defined on PostgreSQL, as the team's nodes left it there.
    const seeded = await run(pgOnly, '--backend', 'postgres', 'set', 'billing', '--duration', '1m', '--permits', '1');
    expect([seeded.code, seeded.stderr]).toEqual([0, '']);
    oldPermits = new PermitRecordStore(new PostgresBackend({ connectionString: pgUrl, mapPrefix: prefix }));
    await oldPermits.connect({ clock: systemClock });
    node = await startNode({
      identity: { acquirer: 'split-1' },
      backend: 'postgres',
      backends: { permits: 'redis' },
      postgres: { connectionString: pgUrl, mapPrefix: prefix },
      redis: { url: redisUrl, mapPrefix: prefix },
      providers: [BillingJobs],
    });
    await eventually('billing defined on Redis by the node', () => node!.semaphores.getDefinition('billing'));
  }, 60_000);

  afterAll(async () => {
    await node?.close();
    await oldPermits?.close();
  });

  it('pauses billing on Redis when pointed at PostgreSQL, where the node announces it keeps permits', async () => {
    const paused = await run(both, '--backend', 'postgres', '--json', 'pause', 'billing');
    expect([paused.code, paused.stderr]).toEqual([0, '']);
    expect((await node!.semaphores.readDefinition('billing')).permits).toBe(0);
    await eventually('the node sees billing paused', () => node!.semaphores.getDefinition('billing')?.permits === 0);
    expect((await oldBilling())?.permits).toBe(1);
    const resumed = await run(both, '--backend', 'postgres', '--json', 'resume', 'billing');
    expect([resumed.code, resumed.stderr]).toEqual([0, '']);
    await eventually('the node sees billing resumed', () => node!.semaphores.getDefinition('billing')?.permits === 1);
  }, 60_000);

  it('refuses, naming the store and --redis-url, when only PostgreSQL is named, and changes nothing there', async () => {
    const refused = await run(pgOnly, '--backend', 'postgres', 'pause', 'billing');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the live nodes keep permits on Redis at ${redisUrl}`);
    expect(refused.stderr).toContain(`prefix ${prefix}`);
    expect(refused.stderr).toContain('--redis-url (or GATEKEEPER_REDIS_URL)');
    expect(refused.stdout).toBe('');
    expect((await oldBilling())?.permits).toBe(1);
    expect(node!.semaphores.getDefinition('billing')?.permits).toBe(1);
  }, 60_000);

  it('status says which store holds what; pointed at a store without the nodes\' presence, it says where to look', async () => {
    const status = await run(both, '--backend', 'postgres', 'status');
    expect([status.code, status.stderr]).toEqual([0, '']);
    expect(status.stdout).toContain(`permits: Redis at ${redisUrl} (prefix ${prefix})`);
    expect(status.stdout).toMatch(new RegExp(`presence, schedules, history, tasks: PostgreSQL at \\S+ \\(schema gatekeeper, prefix ${prefix}\\)`));
    expect(status.stdout).toContain('split-1');
    const json = await run(both, '--backend', 'postgres', '--json', 'status');
    expect(JSON.parse(json.stdout).stores).toMatchObject({ places: { permits: { kind: 'redis', prefix }, tasks: { kind: 'postgres', schema: 'gatekeeper', prefix } }, nodes: 1 });
    // On Redis (permits only) no node announces itself: the CLI says so, and where presence may be, rather than look
    // in a store it was not pointed at (opening one the app does not use would make it look used).
    const elsewhere = await run(both, '--backend', 'redis', 'status');
    expect([elsewhere.code, elsewhere.stderr]).toEqual([0, '']);
    expect(elsewhere.stdout).toContain('presence kept on another store: point --backend at it');
  }, 60_000);

  it('jobs describe finds the live node through the store of its presence, and pointed at Redis says where to look', async () => {
    const withToken = { ...both, GATEKEEPER_ADMIN_TOKEN: 'x'.repeat(32) };
    // Pointed at PostgreSQL (presence): split-1 is found; this test's node does not listen, so the CLI says that.
    const found = await run(withToken, '--backend', 'postgres', 'jobs', 'describe', 'BillingJobs.charge');
    expect(found.code).toBe(3);
    expect(found.stderr).toContain('(live: split-1, none with an address)');
    // Pointed at Redis (permits only): no presence there, and the CLI names the likely reason, not just "none".
    const elsewhere = await run(withToken, '--backend', 'redis', 'jobs', 'describe', 'BillingJobs.charge');
    expect(elsewhere.code).toBe(3);
    expect(elsewhere.stderr).toContain("presence kept on another store than this one: point --backend at the store of the app's backends.presence");
  }, 60_000);

  it('store move names the store it cannot reach (exit 3), and copies nothing', async () => {
    const unreachable = { ...both, GATEKEEPER_REDIS_URL: 'redis://127.0.0.1:1' };
    const refused = await run(unreachable, 'store', 'move', 'permits', '--from', 'postgres', '--to', 'redis');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('cannot reach Redis at redis://127.0.0.1:1');
    expect(refused.stdout).toBe('');
    expect((await oldBilling())?.permits).toBe(1);
  }, 60_000);

  it('an edit of schedules or tasks aimed at a store they moved away from is refused, naming where they went; reads still work', async () => {
    const left = uniquePrefix('split-left');
    const backend = new PostgresBackend({ connectionString: pgUrl, mapPrefix: left });
    await backend.open();
    try {
      for (const capability of ['schedules', 'tasks'] as const) await writeMoveMark(backend, capability, { state: 'left', other: 'redis', at: Date.UTC(2026, 10, 28, 12) });
    } finally {
      await backend.close();
    }
    const onLeft = (...args: string[]) => cli(['--map-prefix', left, '--connect-timeout', '10s', '--backend', 'postgres', ...args], pgOnly);
    const pause = await onLeft('schedules', 'pause', 'nightly-export');
    expect([pause.code, pause.stderr]).toEqual([1, expect.stringContaining('no live node uses this store for schedules: it moved to the redis store on 2026-11-28T12:00:00.000Z; edit it there (--backend redis)')]);
    const purge = await onLeft('tasks', 'purge');
    expect([purge.code, purge.stderr]).toEqual([1, expect.stringContaining('no live node uses this store for tasks: it moved to the redis store')]);
    const list = await onLeft('tasks', 'list');
    expect(list.code).toBe(0);
  }, 60_000);

  it('store move between two stores of one kind: another prefix is a move; one store under two names is refused', async () => {
    const other = uniquePrefix('split-to');
    const same = await run(both, 'store', 'move', 'permits', '--from', 'postgres', '--to', 'postgres');
    expect([same.code, same.stderr]).toEqual([2, expect.stringContaining('--from and --to name the same postgres store: name the new one with the --to-* options')]);
    // The same server under another spelling of its URL: found by a record written on the one and read on the other.
    const aliased = await run(both, 'store', 'move', 'permits', '--from', 'redis', '--to', 'redis', '--to-redis-url', redisUrl.replace('127.0.0.1', 'localhost'));
    expect([aliased.code, aliased.stderr]).toEqual([1, expect.stringContaining('--from and --to reach one and the same redis store')]);
    const moved = await run(both, 'store', 'move', 'permits', '--from', 'postgres', '--to', 'postgres', '--to-map-prefix', other);
    expect([moved.code, moved.stdout]).toEqual([0, expect.stringContaining('Permits: copied to postgres, held there')]);
    const arrived = new PermitRecordStore(new PostgresBackend({ connectionString: pgUrl, mapPrefix: other }));
    await arrived.connect({ clock: systemClock });
    try {
      expect((await arrived.list()).find((stored) => stored.name === 'billing')?.entry.move).toMatchObject({ state: 'arriving', from: 'postgres' });
    } finally {
      await arrived.close();
    }
  }, 60_000);
});
