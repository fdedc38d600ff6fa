import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { ControlledCluster } from '../support/cluster-control';
import { declareFresh } from '../support/fresh-cluster';
import { eventually } from '../support/eventually';

/** quorum: 2 on a two-member cluster: grants while both are up; when one dies, denies and signals running jobs. */
describe('quorum', () => {
  let cluster: ControlledCluster;
  let node: TestNode | undefined;
  afterAll(async () => {
    await node?.close();
    await cluster?.quit();
  });

  it('denies QUORUM_NOT_MET below the member count and fires the lease signal of a running job', async () => {
    cluster = await ControlledCluster.start(2);
    await declareFresh(cluster.clientConfig());
    node = await startNode({
      quorum: 2,
      hazelcast: { clientConfig: cluster.clientConfig() },
      definitions: [{ name: 'nightly', duration: '3s' }, { name: 'other', duration: '3s' }],
      providers: [],
    });
    const gatekeeper = node.gatekeeper;
    const outcome = gatekeeper.withPermit('nightly', async (lease) => {
      await cluster.kill(1);
      await new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }));
      return (lease.signal.reason as Error).message;
    });
    expect(await outcome).toMatchObject({ ran: true, value: expect.stringContaining('QUORUM_NOT_MET') });
    const denied = await eventually('the node to see one member', async () => {
      const result = await gatekeeper.tryAcquire('other');
      return !result.granted && result.message.startsWith('1 ') && result;
    });
    expect(denied).toMatchObject({ granted: false, reason: 'QUORUM_NOT_MET', message: '1 cluster member(s) visible, quorum is 2' });
  });
});
