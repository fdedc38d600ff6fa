import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'hazelcast-client';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { ControlledCluster } from '../support/cluster-control';
import { declareFresh } from '../support/fresh-cluster';

/**
 * One of two members is SIGKILLed while two nodes tick six semaphores every 200 ms, then restarted. IMap backups
 * (backup-count 1 by default) must keep every definition and every permit; no tick may run twice.
 */
describe('losing one of two members', () => {
  const names = ['job-0', 'job-1', 'job-2', 'job-3', 'job-4', 'job-5'];
  let cluster: ControlledCluster;
  let nodes: TestNode[] = [];

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
    await cluster?.quit();
  });

  it('keeps definitions and permits, runs no tick twice, and takes the member back', async () => {
    cluster = await ControlledCluster.start(2);
    await declareFresh(cluster.clientConfig());
    const definitions = names.map((name) => ({ name, duration: '3s' }));
    nodes = await Promise.all(['node-a', 'node-b'].map((acquirer) =>
      startNode({ identity: { acquirer }, hazelcast: { clientConfig: cluster.clientConfig() }, definitions, providers: [] })));
    const ledger: Array<{ name: string; tick: number; node: string; token: number }> = [];
    const denials = new Map<string, number>();
    let tick = 0;
    const ticks = async (count: number) => {
      for (let i = 0; i < count; i++, tick++) {
        const current = tick;
        await Promise.all(nodes.flatMap((n) => names.map(async (name) => {
          const result = await n.gatekeeper.tryAcquire(name);
          if (result.granted) ledger.push({ name, tick: current, node: n.gatekeeper.identity.acquirer, token: result.permit.fencingToken });
          else denials.set(result.reason, (denials.get(result.reason) ?? 0) + 1);
        })));
        await sleep(200); // the workload's tick rate
      }
    };

    await ticks(10);
    const killedAt = tick;
    const raw = await Client.newHazelcastClient(cluster.clientConfig());
    const snapshot = async () => (await (await raw.getMap<string, string>('gatekeeper.permits')).getAll(names)).sort();
    const before = await snapshot();
    await cluster.kill(1);
    // Nothing wrote since the snapshot: every permit state must still be there, byte for byte.
    expect(await snapshot()).toEqual(before);
    await raw.shutdown();
    await ticks(25);
    const restartedAt = tick;
    // Keep ticking while the member starts and rejoins, as a real app would.
    const restarting = cluster.restart(1);
    await ticks(10);
    await restarting;
    await ticks(10);

    const missed = names.map((name) => tick - ledger.filter((e) => e.name === name).length);
    const regrants = names.map((name) => new Set(ledger.filter((e) => e.name === name).map((e) => e.token)).size - 1);
    const changes = names.flatMap((name) => ledger.filter((e, i, all) => {
      const previous = all.slice(0, i).reverse().find((p) => p.name === name);
      return e.name === name && previous && previous.token !== e.token;
    }).map((e) => `${e.name}@${e.tick}:${e.node}`));
    process.stdout.write(`member loss: restarted at tick ${restartedAt}; token changes ${changes.join(' ')}\n`);
    process.stdout.write(`member loss: killed at tick ${killedAt} of ${tick}; ticks missed per semaphore ${missed.join(',')}; ` +
      `new grants after the kill ${regrants.join(',')}; denials ${JSON.stringify(Object.fromEntries(denials))}\n`);
    const perTick = new Map<string, number>();
    for (const e of ledger) perTick.set(`${e.name}@${e.tick}`, (perTick.get(`${e.name}@${e.tick}`) ?? 0) + 1);
    expect([...perTick.values()].filter((n) => n > 1)).toEqual([]);
    for (const name of names) {
      for (const node of nodes) expect(await node.semaphores.readDefinition(name)).toMatchObject({ name, durationMs: 3000 });
      // Every semaphore ran again after the member came back.
      expect(ledger.some((e) => e.name === name && e.tick >= tick - 5)).toBe(true);
    }
  });
});
