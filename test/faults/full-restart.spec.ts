import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'hazelcast-client';
import { startNode, TickJobs, type LedgerEntry, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { ControlledCluster } from '../support/cluster-control';
import { eventually } from '../support/eventually';

/** Every member stops, then starts again with empty maps: nodes deny meanwhile and recover without a restart. */
describe('a full cluster restart', () => {
  let cluster: ControlledCluster;
  let node: TestNode | undefined;

  afterAll(async () => {
    await node?.close();
    await cluster?.quit();
  });

  it('denies while the cluster is down, then resumes and puts the definitions back', async () => {
    cluster = await ControlledCluster.start(1);
    const ledger: LedgerEntry[] = [];
    node = await startNode({
      ledger,
      hazelcast: { clientConfig: cluster.clientConfig() },
      definitions: [{ name: 'billing', duration: '2s', groupPattern: 'default|production' }],
    });
    const jobs = node.get(TickJobs);
    await jobs.billing(0);
    expect(ledger).toHaveLength(1);
    const tokenBefore = ledger[0].token!;

    await cluster.stopAll();
    for (let tick = 1; tick <= 5; tick++) {
      await jobs.billing(tick);
      await sleep(200);
    }
    expect(ledger).toHaveLength(1);
    expect(node.logger.find('warn', 'Cluster unreachable')).toHaveLength(1);

    const restarted = Date.now();
    await cluster.startAll();
    let tick = 6;
    await eventually('billing to run again on the fresh cluster', async () => {
      await jobs.billing(tick++);
      return ledger.length > 1;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    const recoveredMs = Date.now() - restarted;

    // The fresh cluster got the definition back from the node's module options, unchanged.
    const probe = await Client.newHazelcastClient(cluster.clientConfig());
    const stored = await (await probe.getMap<string, string>('gatekeeper.definitions')).get('billing');
    await probe.shutdown();
    expect(JSON.parse(stored ?? 'null')).toMatchObject({ name: 'billing', durationMs: 2000, groupPattern: 'default|production' });
    // billing from the options, reports and export auto-defined by their decorators.
    expect(node.logger.find('log', 'put back 3 definition(s)')).toHaveLength(1);
    // The counter was lost with the data, yet tokens still grow: they restart from the clock.
    expect(ledger.at(-1)!.token!).toBeGreaterThan(tokenBefore);
    expect(node.logger.find('log', 'Cluster reachable again').length).toBeGreaterThanOrEqual(1);
    process.stdout.write(`full restart: billing ran again ${recoveredMs} ms after the members were restarted\n`);
  });
});
