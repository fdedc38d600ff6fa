import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { LeaderOnly, TaskHandler } from '../../lib';
import { startNode, TickJobs, type LedgerEntry, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { ControlledCluster } from '../support/cluster-control';
import { declareFresh } from '../support/fresh-cluster';
import { eventually } from '../support/eventually';

/** An election and a task worker on the node too: every capability's periodic calls fail through the outage. */
@Injectable()
class OtherCapabilities {
  @LeaderOnly('outage-leader')
  async lead(): Promise<void> {}

  @TaskHandler('outage-task', { lease: '2s' })
  async work(): Promise<void> {}
}

/** How long the members stay down: long enough for every periodic call (each second or faster) to fail many times. */
const OUTAGE_MS = 15_000;

/**
 * A node's log through an outage of the whole cluster: one line when the cluster goes and one when it is back, per
 * capability, however many calls fail meanwhile (a tick every 250 ms, membership every second, the runtime schedules'
 * poll every second, the history's flush); the Hazelcast client's own warnings folded in.
 */
describe("a node's log through a cluster outage", () => {
  let cluster: ControlledCluster;
  let node: TestNode | undefined;
  afterAll(async () => {
    await node?.close();
    await cluster?.quit();
  });

  it('says each change once: no line repeats, and the client adds nothing', async () => {
    cluster = await ControlledCluster.start(1);
    await declareFresh(cluster.clientConfig());
    const ledger: LedgerEntry[] = [];
    node = await startNode({
      ledger,
      // The client's own level as an application has it by default (WARN), not the tests' OFF.
      hazelcast: { clientConfig: { ...cluster.clientConfig(), properties: { 'hazelcast.logging.level': 'WARN' } } },
      definitions: [{ name: 'billing', duration: '2s' }],
      membership: { interval: '1s' },
      schedules: { history: { flushInterval: '500ms' } },
      tasks: { scanInterval: '200ms' },
      providers: [TickJobs, OtherCapabilities],
    });
    const jobs = node.get(TickJobs);
    let tick = 0;
    const ticking = setInterval(() => void jobs.billing(tick++).catch(() => undefined), 250);
    try {
      await eventually('billing to run', () => ledger.length > 0, { timeoutMs: 20_000 });
      const before = node.logger.entries.length;
      await cluster.stopAll();
      await sleep(OUTAGE_MS); // the fault itself: the members stay down this long
      await cluster.startAll();
      const runs = ledger.length;
      await eventually('billing to run again', () => ledger.length > runs, { timeoutMs: 60_000, intervalMs: 250 });
      await sleep(3_000); // the capabilities' next periodic calls succeed and say so
      const lines = node.logger.entries.slice(before).filter((e) => e.level === 'warn' || e.level === 'error' || e.level === 'log');
      const shape = (m: string) => m.replace(/\d[\d.:TZ-]*/g, '#');
      const counts = new Map<string, number>();
      for (const line of lines) counts.set(`${line.level} ${shape(line.message)}`, (counts.get(`${line.level} ${shape(line.message)}`) ?? 0) + 1);
      const repeated = [...counts].filter(([, n]) => n > 1);
      process.stdout.write(`outage of ${OUTAGE_MS} ms: ${lines.length} lines at log/warn/error\n${lines.map((l) => `  ${l.level} ${l.message.slice(0, 160)}`).join('\n')}\n`);
      expect(repeated).toEqual([]);
      // The client's own lines (named by the client's object: ConnectionManager, ClusterService, ...) say nothing more.
      expect(lines.filter((l) => /^(Connection\w*|Cluster\w*|HazelcastClient|Invocation\w*|LifecycleService|WaitStrategy|Partition\w*): /.test(l.message))).toEqual([]);
      expect(node.logger.find('warn', 'Cluster unreachable')).toHaveLength(1);
    } finally {
      clearInterval(ticking);
    }
  });
});
