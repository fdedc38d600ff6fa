import { Injectable } from '@nestjs/common';
import { ClusterSingleton } from '../../lib';
import { MemoryBackend } from '../../lib/testing';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { beforeMapWrites } from '../support/memory-map-hooks';

const SEMAPHORE = 'rebuilt-billing';

@Injectable()
class RebuiltJobs {
  @ClusterSingleton(SEMAPHORE, '1m')
  async charge(): Promise<void> {}
}

/**
 * A semaphore rebuilt after the store lost it is put back by whichever node gets there first, with what that node
 * knew. A node that saw a newer definition before the loss (an operator's edit) brings it in while the rebuilt entry
 * waits out the lost permits, so the edit is not lost with the store.
 */
describe('a semaphore rebuilt by a node that knew less', () => {
  const nodes: TestNode[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.close()));
  });

  it('gets the newer definition another node saw before the loss', async () => {
    const cluster = new MemoryBackend();
    // Node a's writes of the semaphores wait while `held` is set: the node that rebuilds first is the one that knew less.
    let release: (() => void) | undefined;
    let held: Promise<void> | undefined;
    const aNode = beforeMapWrites(cluster.node(), 'semaphores', () => held);
    const a = await startNode({ identity: { acquirer: 'a' }, backend: 'memory', backends: { permits: aNode }, membership: false, providers: [RebuiltJobs] });
    nodes.push(a);
    await a.semaphores.updateDefinition(SEMAPHORE, { permits: 3 });
    await eventually('node a to see the operator\'s edit', () => a.semaphores.getDefinition(SEMAPHORE)?.permits === 3);

    held = new Promise((resolve) => (release = resolve));
    cluster.records.loseData();
    // Node b never saw the edit: it puts the semaphore back from its decorator, one permit, waiting out the loss.
    const b = await startNode({ identity: { acquirer: 'b' }, backend: 'memory', backends: { permits: cluster }, membership: false, providers: [RebuiltJobs] });
    nodes.push(b);
    const rebuilt = await eventually('node b to rebuild the semaphore', async () => {
      const definition = await b.semaphores.readDefinition(SEMAPHORE).catch(() => undefined);
      return definition?.permits === 1 ? definition : undefined;
    });
    expect(rebuilt.permits).toBe(1);

    held = undefined;
    release!();
    // Node a hears the rebuilt entry, knows a newer definition than the one it was rebuilt from, and brings it in.
    await eventually('the operator\'s edit back in the store', async () => (await b.semaphores.readDefinition(SEMAPHORE)).permits === 3);
    await eventually('node b to see it', () => b.semaphores.getDefinition(SEMAPHORE)?.permits === 3);
  });
});
