import { Injectable } from '@nestjs/common';
import { ClusterSingleton } from '../../lib';
import { MemoryBackend } from '../../lib/testing';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';

@Injectable()
class QuietJobs {
  @ClusterSingleton('quiet-report', '1m')
  async report(): Promise<void> {}
}

/**
 * A node that does not hold a job skips every tick of it: it says so once, at verbose, and again only when the reason
 * changes, not a line per tick per job (its history still counts every skipped tick).
 */
describe('skipped ticks in the logs', () => {
  const nodes: TestNode[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  it('one line per change of reason, not one per tick', async () => {
    const backend = new MemoryBackend();
    for (const acquirer of ['holder', 'other']) nodes.push(await startNode({ identity: { acquirer }, backend: 'memory', backends: { permits: backend }, membership: false, providers: [QuietJobs] }));
    const [holder, other] = nodes;
    await holder.get(QuietJobs).report();
    for (let tick = 0; tick < 10; tick++) await other.get(QuietJobs).report();
    const skips = other.logger.entries.filter((e) => e.message.startsWith('QuietJobs.report skipped'));
    expect(skips).toEqual([{ level: 'verbose', message: expect.stringContaining('skipped: NO_PERMIT_AVAILABLE') }]);
  });
});
