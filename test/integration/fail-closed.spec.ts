import { randomUUID } from 'node:crypto';
import { DenyReason } from '../../lib';
import { startNode, TickJobs, type LedgerEntry } from '../fixtures/gatekeeper-node.fixture';
import { startMemberProcess } from '../support/member-process';
import { freePort } from '../support/free-port';

describe('fail closed when the cluster goes away', () => {
  it('denies every permit while the cluster is unreachable, runs nothing, and says so once', async () => {
    const cluster = await startMemberProcess(await freePort(), `fail-closed-${randomUUID().slice(0, 8)}`);
    const ledger: LedgerEntry[] = [];
    const node = await startNode({
      ledger,
      hazelcast: {
        clientConfig: {
          clusterName: cluster.clusterName,
          network: { clusterMembers: cluster.addresses },
          properties: { 'hazelcast.logging.level': 'OFF' },
        },
      },
    });
    try {
      const jobs = node.get(TickJobs);
      await jobs.billing(0);
      expect(ledger).toHaveLength(1);

      await cluster.stop();
      for (let tick = 1; tick <= 5; tick++) await jobs.billing(tick);
      expect(ledger).toHaveLength(1);
      expect(await node.gatekeeper.tryAcquire('billing')).toMatchObject({ granted: false, reason: DenyReason.STORE_UNAVAILABLE });
      expect(node.logger.find('warn', 'Cluster unreachable')).toHaveLength(1);
    } finally {
      await node.close();
      await cluster.stop();
    }
  });
});
