import { Client, type IMap } from 'hazelcast-client';
import { InvalidOptionsError } from '../../lib';
import { HazelcastConnection } from '../../lib/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/tasks/hazelcast-task.store';
import { decideSubmit } from '../../lib/tasks/task-submit.rules';
import { decideClaim } from '../../lib/tasks/task-claim.rules';
import type { TaskRecord } from '../../lib/tasks/task';
import { encodeTask } from '../../lib/tasks/task.codec';
import { ControlledCluster } from '../support/cluster-control';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';
// The client's IMap implementation, to see which call a batch is (not part of the client's public API).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MapProxy } = require('hazelcast-client/lib/proxy/MapProxy') as { MapProxy: { prototype: IMap<string, unknown> } };

/*
 * Task writes through the library's member jar (hazelcast.memberProcessors): one call for the writes made together,
 * each still a compare-and-set of its own; a clear start-up error on members without the jar; and a member that joins
 * later without it costs the writes it failed, never a wrong answer, and is reported once.
 */

const actor = { instance: 'node-a', acquirer: 'a' };

function submitted(id: string, at: number): TaskRecord {
  return decideSubmit(undefined, { type: 'mp', name: id, data: { n: id } }, at, 5_000).task;
}

function claimed(task: TaskRecord, at: number): TaskRecord {
  const decision = decideClaim(task, actor, at, 30_000, 500, 3);
  if (decision.outcome !== 'claimed') throw new Error(`not claimable: ${decision.outcome}`);
  return decision.task;
}

describe('task writes through the members’ processors', () => {
  const mapPrefix = uniquePrefix('member-processors');
  let store: HazelcastTaskStore;
  beforeAll(async () => {
    store = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix, memberProcessors: true });
    await store.connect();
  });
  afterAll(async () => {
    await store.close();
    const raw = await Client.newHazelcastClient(testClientConfig());
    await (await raw.getMap(`${mapPrefix}.tasks`)).destroy();
    await raw.shutdown();
  });

  it('sends the writes made together as one call, and answers each on its own', async () => {
    const now = Date.now();
    const tasks = Array.from({ length: 16 }, (_, i) => submitted(`round-${i}`, now));
    const before = store.operationCount();
    // One executeOnKey, whose writes are single-key operations with synchronous backups on the members; never
    // executeOnKeys, whose backups are asynchronous (an acknowledged write could die with its member).
    const one = jest.spyOn(MapProxy.prototype, 'executeOnKey');
    const many = jest.spyOn(MapProxy.prototype, 'executeOnKeys');
    let calls: number[] = [];
    const created = await Promise.all(tasks.map((task) => store.compareAndSet(task.id, { raw: null }, task))).finally(() => {
      calls = [one.mock.calls.length, many.mock.calls.length];
      one.mockRestore();
      many.mockRestore();
    });
    expect(created).toEqual(tasks.map(() => true));
    expect(store.operationCount() - before).toBe(1);
    expect(calls).toEqual([1, 0]);

    // A claim round: the even ones against what is stored, the odd ones against a value that was never stored.
    const mid = store.operationCount();
    const claims = await Promise.all(
      tasks.map((task, i) => store.compareAndSet(task.id, { raw: i % 2 === 0 ? encodeTask(task) : encodeTask({ ...task, data: { n: 'never stored' } }) }, claimed(task, now))),
    );
    expect(claims).toEqual(tasks.map((_, i) => i % 2 === 0));
    expect(store.operationCount() - mid).toBe(1);
    for (const [i, task] of tasks.entries()) {
      const read = await store.read(task.id);
      expect(read.task?.state).toBe(i % 2 === 0 ? 'running' : 'pending');
    }
  });

  it('never lets two writes to one key share a call: of two creates in one turn, one lands', async () => {
    const now = Date.now();
    const first = submitted('twice', now);
    const second = { ...submitted('twice', now), data: { n: 'second' } };
    const landed = await Promise.all([store.compareAndSet(first.id, { raw: null }, first), store.compareAndSet(second.id, { raw: null }, second)]);
    expect(landed.filter(Boolean)).toHaveLength(1);
    const read = await store.read(first.id);
    expect(read.raw).toBe(encodeTask(landed[0] ? first : second));
  });

  it('removes only the value it was given', async () => {
    const task = submitted('gone', Date.now());
    await store.compareAndSet(task.id, { raw: null }, task);
    const [stale, current] = await Promise.all([
      store.compareAndSet(task.id, { raw: encodeTask({ ...task, data: { n: 'stale' } }) }, null),
      store.compareAndSet('absent', { raw: encodeTask(task) }, null),
    ]);
    expect([stale, current]).toEqual([false, false]);
    expect(await store.compareAndSet(task.id, { raw: encodeTask(task) }, null)).toBe(true);
    expect((await store.read(task.id)).task).toBeUndefined();
  });
});

describe('members without the jar', () => {
  let cluster: ControlledCluster | undefined;
  afterEach(async () => {
    await cluster?.quit();
    cluster = undefined;
  });

  it('refuses to start with memberProcessors on, naming the option and what to do', async () => {
    cluster = await ControlledCluster.start(1, { withoutProcessors: [0] });
    const store = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: cluster.clientConfig() }), mapPrefix: uniquePrefix('no-jar'), memberProcessors: true });
    const failure = await store.connect().then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidOptionsError);
    expect((failure as Error).message).toMatch(/hazelcast\.memberProcessors.*gatekeeper-member\.jar on every member/s);
    // Off, the same members serve the store.
    const plain = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: cluster.clientConfig() }), mapPrefix: uniquePrefix('no-jar') });
    await plain.connect();
    const task = submitted('plain', Date.now());
    expect(await plain.compareAndSet(task.id, { raw: null }, task)).toBe(true);
    await plain.close();
  });

  it('a member that joins later without it: the writes it failed are unknown, the operator is told once, and later writes land one call each', async () => {
    cluster = await ControlledCluster.start(2, { withoutProcessors: [1] });
    await cluster.stop(1); // the store starts on the member with the jar alone
    const warnings: string[] = [];
    const mapPrefix = uniquePrefix('late-member');
    const store = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: cluster.clientConfig() }), mapPrefix, memberProcessors: true });
    await store.connect({ warning: (message) => warnings.push(message) });
    try {
      await cluster.restart(1);
      const raw = await Client.newHazelcastClient(cluster.clientConfig());
      const map: IMap<string, string> = await raw.getMap(`${mapPrefix}.probe`);
      // Until partitions have moved to the new member, every write still reaches the one with the jar.
      await eventually('partitions on the member without the jar', async () => (await raw.getPartitionService().getPartitionCount()) > 0 && (await ownsSome(raw, map)), { timeoutMs: 60_000, intervalMs: 250 });
      await raw.shutdown();

      const now = Date.now();
      const tasks = Array.from({ length: 64 }, (_, i) => submitted(`late-${i}`, now));
      const outcomes = await Promise.allSettled(tasks.map((task) => store.compareAndSet(task.id, { raw: null }, task)));
      expect(outcomes.some((o) => o.status === 'rejected')).toBe(true);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/cannot run the gatekeeper member jar.*one call each/s);

      // Each write again, against what a read finds: every one lands, through plain calls now.
      for (const task of tasks) {
        const read = await store.read(task.id);
        if (read.task) expect(read.raw).toBe(encodeTask(task));
        else expect(await store.compareAndSet(task.id, { raw: null }, task)).toBe(true);
      }
      expect(warnings).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});

/** Whether the member that joined second owns any partition of the cluster yet (as the client's partition table says). */
async function ownsSome(raw: Client, map: IMap<string, string>): Promise<boolean> {
  const members = raw.getCluster().getMembers();
  if (members.length < 2) return false;
  const newest = members[members.length - 1].uuid.toString();
  const service = raw.getPartitionService() as unknown as { getPartitionOwner?(id: number): { toString(): string } | undefined };
  const count = raw.getPartitionService().getPartitionCount();
  await map.size(); // refreshes the client's partition table
  for (let id = 0; id < count; id++) if (service.getPartitionOwner?.(id)?.toString() === newest) return true;
  return false;
}
