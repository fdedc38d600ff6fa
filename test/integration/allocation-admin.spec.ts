import { Injectable, type INestApplication, type OnModuleInit } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AllocationService, GatekeeperModule, type AllocationStatus } from '../../lib';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { CapturingLogger } from '../support/capturing-logger';
import { cli } from '../support/cli-process';
import { eventually } from '../support/eventually';
import { testClientConfig, testCluster, uniquePrefix } from '../support/test-cluster';

const TOKEN = 'allocation-admin-token-0123456789';
const QUEUES = Array.from({ length: 12 }, (_, i) => `queue-${String(i).padStart(2, '0')}`);

/** Consumers of the twelve queues, as users write them. */
@Injectable()
class Consumers implements OnModuleInit {
  constructor(private readonly allocations: AllocationService) {}

  onModuleInit(): void {
    this.allocations.participate('queues', { resources: () => QUEUES });
  }
}

/**
 * The operators' view of allocations: the admin API (`GET <prefix>/allocations`, `GET .../:name`,
 * `POST .../:name/rebalance`) and the CLI (`allocations [name]`, `rebalance <name>`), both read from the cluster.
 */
describe('allocations for operators: admin API and CLI (real member)', () => {
  const prefix = uniquePrefix('alloc-admin');
  const { clusterName, addresses } = testCluster();
  const env = { GATEKEEPER_HZ_MEMBERS: addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: clusterName };
  const run = (...args: string[]) => cli(['--map-prefix', prefix, ...args], env);
  const options = { allocations: [{ name: 'queues', lease: '2s', rebalanceDelay: '200ms' }], maxClockSkew: '50ms', membership: false as const };
  let app: INestApplication;
  let base: string;
  let other: TestNode;

  const call = async (method: string, path: string) => {
    const response = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        identity: { acquirer: 'ops-node-a', group: 'production' },
        hazelcast: { clientConfig: testClientConfig(), mapPrefix: prefix },
        admin: { path: 'ops', token: TOKEN },
        ...options,
      })],
      providers: [Consumers],
    }).setLogger(new CapturingLogger()).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `${await app.getUrl()}/ops`.replace('[::1]', '127.0.0.1');
    other = await startNode({ mapPrefix: prefix, identity: { acquirer: 'ops-node-b', group: 'production' }, providers: [Consumers], ...options });
    await eventually('6/6', () => {
      const status = app.get(AllocationService).status('queues');
      return status.skew === 0 && status.unowned === 0 && status.owners.filter((o) => o.resources.length === 6).length === 2;
    }, { timeoutMs: 15_000 });
  });
  afterAll(async () => {
    await other?.close();
    await app?.close();
  });

  it('GET allocations and allocations/:name show who owns what, skew and the last rebalance; unknown is a 404 naming it', async () => {
    const all = await call('GET', '/allocations');
    expect(all.status).toBe(200);
    expect(all.body.map((a: AllocationStatus) => a.name)).toEqual(['queues']);
    const one = await call('GET', '/allocations/queues');
    expect(one.body).toMatchObject({ name: 'queues', resources: 12, unowned: 0, skew: 0, lastRebalance: { settled: true } });
    expect(one.body.owners.map((o: { acquirer: string; resources: string[] }) => [o.acquirer, o.resources.length]).sort()).toEqual([['ops-node-a', 6], ['ops-node-b', 6]]);
    const ghost = await call('GET', '/allocations/ghost');
    expect(ghost).toMatchObject({ status: 404, body: { allocation: 'ghost', message: expect.stringContaining('Unknown allocation "ghost"') } });
    expect((await fetch(`${base}/allocations`)).status).toBe(401); // behind the same guard as every admin route
  });

  it('POST allocations/:name/rebalance is answered by a new plan with nothing to move', async () => {
    const before = (await call('GET', '/allocations/queues')).body.lastRebalance.generation;
    expect(await call('POST', '/allocations/queues/rebalance')).toEqual({ status: 202, body: { requested: true, allocation: 'queues' } });
    const after = await eventually('a new plan', async () => {
      const r = (await call('GET', '/allocations/queues')).body.lastRebalance;
      return r.generation > before && r;
    });
    expect(after).toMatchObject({ reason: 'requested', moved: 0 });
    expect((await call('POST', '/allocations/ghost/rebalance')).status).toBe(404);
  });

  it('the CLI shows allocations (table and JSON), one with its owners, and asks for a rebalance', async () => {
    const [table, json, one] = await Promise.all([run('allocations'), run('--json', 'allocations'), run('allocations', 'queues')]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/ALLOCATION\s+NODES\s+RESOURCES\s+UNOWNED\s+SKEW\s+LAST REBALANCE\nqueues\s+2\s+12\s+0\s+0\s+#\d+/);
    expect(JSON.parse(json.stdout)[0]).toMatchObject({ name: 'queues', resources: 12, skew: 0 });
    expect(one.stdout).toContain('allocation "queues": 12 resources, 0 unowned, skew 0');
    expect(one.stdout).toMatch(/ops-node-a\s+production\s+owns\s+6\s+queue-/);
    const rebalanced = await run('--json', 'rebalance', 'queues');
    expect([rebalanced.code, JSON.parse(rebalanced.stdout)]).toEqual([0, { requested: true, allocation: 'queues' }]);
    const ghost = await run('allocations', 'ghost');
    expect([ghost.code, ghost.stderr]).toEqual([1, expect.stringContaining('Unknown allocation "ghost"')]);
    const empty = await run('rebalance', '');
    expect(empty.code).toBe(2);
  });
});
