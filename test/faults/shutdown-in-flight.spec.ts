import { ControlledCluster } from '../harness';
import { startNode, TickJobs, type LedgerEntry } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { declareFresh } from '../support/fresh-cluster';
import { uniquePrefix } from '../support/test-cluster';

/**
 * Shutdown begins while a tick's grant is on its way (the node's link to the member is slow). The tick must not
 * run, and shutdown must release the permit that grant gave, after it landed: a tick that ran then would run
 * while the permit was already given back and another node could hold it.
 */
describe('shutdown while a grant is in flight', () => {
  let cluster: ControlledCluster;
  beforeAll(async () => {
    cluster = await ControlledCluster.start(1, { proxied: true });
    await declareFresh(cluster.clientConfig());
  });
  afterAll(async () => {
    await cluster?.quit();
  });

  it('never runs the tick and releases its permit once the grant lands', async () => {
    const mapPrefix = uniquePrefix('in-flight');
    const ledger: LedgerEntry[] = [];
    const definitions = [{ name: 'billing', duration: '20s' }];
    const node = await startNode({ identity: { acquirer: 'node-a' }, ledger, mapPrefix, definitions, hazelcast: { clientConfig: cluster.clientConfig(), mapPrefix } });
    const other = await startNode({ identity: { acquirer: 'node-b' }, ledger, mapPrefix, definitions, hazelcast: { clientConfig: cluster.clientConfig(), mapPrefix } });
    try {
      const proxy = cluster.proxy(0);
      const sent = () => proxy.connections().reduce((sum, c) => sum + c.bytesUp, 0);
      proxy.delay(500);
      const before = sent();
      const tick = node.get(TickJobs).billing(1);
      await eventually('the grant to be on its way', () => sent() > before, { intervalMs: 5 });
      const closing = node.close(); // what SIGTERM does with enableShutdownHooks
      await tick;
      await closing;
      proxy.heal();
      expect(ledger).toEqual([]);
      // The permit the late grant gave was released by the shutdown: the other node gets it at once.
      const taken = await other.gatekeeper.tryAcquire('billing');
      expect(taken).toMatchObject({ granted: true, outcome: 'granted' });
    } finally {
      cluster.proxy(0).heal();
      await node.close();
      await other.close();
    }
  });
});
