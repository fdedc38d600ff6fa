import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'hazelcast-client';
import { startNode, TickJobs, type LedgerEntry, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { ControlledCluster } from '../support/cluster-control';
import { declareFresh } from '../support/fresh-cluster';
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
    await declareFresh(cluster.clientConfig());
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

    // The restarted cluster got the definition back, unchanged, with a recovery wait before its first grant.
    const probe = await Client.newHazelcastClient(cluster.clientConfig());
    const stored = await (await probe.getMap<string, string>('gatekeeper.semaphores')).get('billing');
    await probe.shutdown();
    expect(JSON.parse(stored ?? 'null')).toMatchObject({ definition: { name: 'billing', durationMs: 2000, groupPattern: 'default|production' } });
    expect(JSON.parse(stored ?? 'null').graceUntil).toEqual(expect.any(Number));
    expect(node.logger.find('warn', 'The entry of "billing" was lost')).toHaveLength(1);
    // The data was lost, yet tokens still grow: a rebuilt entry starts above the clock in microseconds.
    expect(ledger.at(-1)!.token!).toBeGreaterThan(tokenBefore);
    expect(node.logger.find('log', 'Cluster reachable again').length).toBeGreaterThanOrEqual(1);
    process.stdout.write(`full restart: billing ran again ${recoveredMs} ms after the members were restarted\n`);
  });
});
