import { ClusterService, GatekeeperError } from '../../lib';
import { MemoryBackend } from '../../lib/testing';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

/** Presence through the module: Nest application contexts, each with its own client, on the real member. */
describe('ClusterService participants on a real member', () => {
  const nodes: TestNode[] = [];
  let mapPrefix: string;
  const membership = { interval: '500ms', ttl: '1500ms' };
  beforeEach(() => {
    mapPrefix = uniquePrefix('presence');
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.close()));
  });
  async function node(acquirer: string, extra: { refuseDuplicateName?: boolean } = {}) {
    const started = await startNode({ identity: { acquirer, group: 'production' }, mapPrefix, membership: { ...membership, ...extra }, providers: [] });
    nodes.push(started);
    return started;
  }
  const names = (n: TestNode) => n.get(ClusterService).participants().map((p) => p.acquirer);

  it('lists every live instance, oldest first, on every node, and drops one that shuts down at once', async () => {
    const a = await node('node-a');
    const b = await node('node-b');
    await eventually('both nodes to see both', () => names(a).join() === 'node-a,node-b' && names(b).join() === 'node-a,node-b');
    const self = a.get(ClusterService).current()!;
    expect(self).toEqual(expect.objectContaining({ acquirer: 'node-a', group: 'production', instance: a.gatekeeper.instanceId }));
    expect(self.version).toMatch(/^\d+\.\d+\.\d+/);
    const closed = Date.now();
    await b.close();
    await eventually('node-a to see node-b leave', () => names(a).join() === 'node-a', { timeoutMs: 5_000, intervalMs: 20 });
    process.stdout.write(`presence: a graceful leave seen ${Date.now() - closed} ms after close (interval 500 ms)\n`);
  });

  it('reports two live instances with one name on both, and refuses a third with the option', async () => {
    const first = await node('twin');
    const second = await node('twin');
    await eventually('both to see the clash', () =>
      [first, second].every((n) => (n.get(ClusterService).nameClashes().get('twin')?.length ?? 0) === 2));
    // Nest's Logger is process-wide: the last node's capturing logger gets every node's lines.
    await eventually('the clash warning', () => [first, second].some((n) => n.logger.find('warn', 'uses this node\'s acquirer name "twin"').length > 0));
    const refused = await node('twin', { refuseDuplicateName: true }).then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(GatekeeperError);
    expect((refused as Error).message).toContain('Refusing to start: acquirer name "twin" is already used by live instance(s)');
  });

  it('starts without presence when its store cannot be reached (a warning, retried), unless the name check is required', async () => {
    // Presence on a backend of its own whose maps cannot be opened (one node's, so the module uses it as it is); the
    // permits on another that works.
    const unreachable = new MemoryBackend().node();
    unreachable.map = async () => {
      throw new Error('presence map unreachable');
    };
    const backends = { presence: unreachable };
    const started = await startNode({ backend: 'memory', backends, identity: { acquirer: 'lonely' }, membership: { interval: '1s' }, providers: [] });
    nodes.push(started);
    expect(started.get(ClusterService).participants()).toEqual([]);
    expect(started.logger.find('warn', 'Presence is unavailable, trying again in 1000 ms: presence map unreachable')).toHaveLength(1);
    const strict = await startNode({
      backend: 'memory', backends, identity: { acquirer: 'strict' }, membership: { interval: '1s', refuseDuplicateName: true }, providers: [],
    }).then(() => undefined, (error: unknown) => error);
    expect((strict as Error).message).toContain('Refusing to start: cannot check the acquirer name against live instances');
  });

  it('lets a migration through GatekeeperService refuse a group in which presence knows no live instance', async () => {
    const a = await startNode({
      identity: { acquirer: 'node-a', group: 'production' }, mapPrefix, membership, providers: [],
      definitions: [{ name: 'moved', duration: '5s', groupPattern: 'production' }],
    });
    nodes.push(a);
    const refused = await a.semaphores.migrateGroups({ fromGroup: 'production', toGroup: 'dr-stie' }).then(() => undefined, (e: unknown) => e);
    expect((refused as Error).message).toContain('no live node is known in group "dr-stie" (groups with live nodes: production)');
    expect((await a.semaphores.migrateGroups({ fromGroup: 'production', toGroup: 'dr-stie', force: true })).changes).toHaveLength(1);
  });
});
