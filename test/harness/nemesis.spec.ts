import { Client, type ClientConfig } from 'hazelcast-client';
import { ControlledCluster } from '../support/cluster-control';
import { eventually } from '../support/eventually';
import { within } from './deadline';
import { keysOwnedBy, ownerIndex, partitionOwners, partitionTableStable } from './key-owner';
import { ProbeClient } from './probe-client';
import { tcpSocketsOf } from './proc-net';

/**
 * Proves each fault of the nemesis against real members: one proxied 3-member cluster shared by the cases, in
 * order (the last one kills two members). Numbers go to stdout for the report.
 */
describe('the nemesis against a proxied 3-member cluster', () => {
  let cluster: ControlledCluster;
  let client: Client;
  const lifecycle: Array<{ state: string; at: number }> = [];
  const report = (line: string) => process.stdout.write(`nemesis: ${line}\n`);

  beforeAll(async () => {
    const started = Date.now();
    cluster = await ControlledCluster.start(3, { proxied: true });
    report(`3 proxied members up in ${Date.now() - started} ms`);
    const config: ClientConfig = {
      ...cluster.clientConfig(),
      lifecycleListeners: [(state) => lifecycle.push({ state, at: Date.now() })],
    };
    client = await Client.newHazelcastClient(config);
    await partitionTableStable(client);
  });

  // A failed case must not leave its network fault on for the next one.
  afterEach(() => [0, 1, 2].forEach((i) => cluster?.proxy(i).heal()));

  afterAll(async () => {
    await client?.shutdown();
    await cluster?.quit();
  });

  it('routes a smart client to each member through its proxy only, one connection each', async () => {
    const advertised = client.getCluster().getMembers().map((m) => `${m.address.host}:${m.address.port}`);
    expect(advertised.sort()).toEqual([...cluster.addresses].sort());
    await eventually('one connection from this process on every proxy', () =>
      [0, 1, 2].every((i) => cluster.proxy(i).connections({ pid: process.pid }).length === 1));
    // The only sockets of this process to the members' own client ports are the proxies' upstream ends.
    const memberPorts = new Set(cluster.directAddresses.map((a) => Number(a.split(':')[1])));
    const toMembers = tcpSocketsOf(process.pid).filter((s) => s.state === '01' && memberPorts.has(s.remotePort));
    const proxied = [0, 1, 2].reduce((n, i) => n + cluster.proxy(i).connections().length, 0);
    expect(toMembers).toHaveLength(proxied);
    expect(proxied).toBe(3);
  });

  it('blackholes one member: its keys hang past a deadline, other keys answer, heal lets the call finish', async () => {
    const map = await client.getMap<string, string>('nemesis.blackhole');
    const [onZero] = keysOwnedBy(client, cluster.addresses, 0, 'bh-zero-');
    const [onOne] = keysOwnedBy(client, cluster.addresses, 1, 'bh-one-');
    await Promise.all([map.put(onZero, 'zero'), map.put(onOne, 'one')]);

    cluster.proxy(0).blackhole();
    const stalled = map.get(onZero);
    const stalledDone = stalled.then(() => Date.now(), () => Date.now());
    const [blocked, other] = await Promise.all([within(stalled, 1500), within(map.get(onOne), 1500)]);
    expect(blocked.settled).toBe(false);
    expect(other).toMatchObject({ settled: true, value: 'one' });
    cluster.proxy(0).heal();
    const healedAt = Date.now();
    const healed = await within(stalled, 5000);
    expect(healed).toMatchObject({ settled: true, value: 'zero' });
    report(`blackhole: owner's key pending after ${blocked.ms} ms, other member's key answered in ${other.ms} ms, `
      + `held call answered ${(await stalledDone) - healedAt} ms after heal`);
  });

  it('delays one member: its calls take both delays longer, calls to the others do not', async () => {
    const map = await client.getMap<string, string>('nemesis.delay');
    const [onOne] = keysOwnedBy(client, cluster.addresses, 1, 'dl-one-');
    const [onTwo] = keysOwnedBy(client, cluster.addresses, 2, 'dl-two-');
    await Promise.all([map.put(onOne, 'one'), map.put(onTwo, 'two')]);
    const timed = async (key: string) => {
      const started = Date.now();
      expect(await map.get(key)).toBeDefined();
      return Date.now() - started;
    };
    cluster.proxy(1).delay(250);
    const [slow, fast] = await Promise.all([timed(onOne), timed(onTwo)]);
    cluster.proxy(1).heal();
    expect(slow).toBeGreaterThanOrEqual(500);
    expect(fast).toBeLessThan(slow);
    report(`delay(250) on member 1: its key answered in ${slow} ms, member 2's in ${fast} ms`);
  });

  it("blackholes one client process only: its calls to the member hang while this process's calls answer", async () => {
    const probe = await ProbeClient.start(cluster.clientConfig());
    try {
      const map = await client.getMap<string, string>('nemesis.scoped');
      const [onZero] = keysOwnedBy(client, cluster.addresses, 0, 'sc-zero-');
      await map.put(onZero, 'zero');
      await eventually('the probe process connected to member 0', () => cluster.proxy(0).connections({ pid: probe.pid }).length === 1);
      expect(await probe.get('nemesis.scoped', onZero)).toBe('zero');

      cluster.proxy(0).blackhole({ pid: probe.pid });
      const stalled = probe.get('nemesis.scoped', onZero);
      const [cut, mine] = await Promise.all([within(stalled, 1500), within(map.get(onZero), 1500)]);
      expect(cut.settled).toBe(false);
      expect(mine).toMatchObject({ settled: true, value: 'zero' });
      cluster.proxy(0).heal({ pid: probe.pid });
      expect(await within(stalled, 5000)).toMatchObject({ settled: true, value: 'zero' });
      report(`blackhole of one pid: that process's call pending after ${cut.ms} ms, this process's call to the same member `
        + `answered in ${mine.ms} ms`);
    } finally {
      await probe.stop();
    }
  });

  it("resets one member's connections: the client reconnects by itself, with no lifecycle event, and an entry event written meanwhile is lost", async () => {
    const events: string[] = [];
    const map = await client.getMap<string, string>('nemesis.events');
    await map.addEntryListener({ added: (e) => events.push(e.key as string), updated: (e) => events.push(e.key as string) }, undefined, false);
    // The writer reaches the cluster through member 1 only, so member 0's reset does not touch it.
    const writer = await Client.newHazelcastClient({
      ...cluster.clientConfig(),
      network: { clusterMembers: [cluster.addresses[1]], smartRouting: false },
    });
    const written = await writer.getMap<string, string>('nemesis.events');
    const keys = keysOwnedBy(client, cluster.addresses, 0, 'ev-', 400)[Symbol.iterator]();
    const put = async () => {
      const key = keys.next().value as string;
      await written.put(key, 'x');
      return key;
    };
    const proxy = cluster.proxy(0);
    const me = { pid: process.pid };

    /** Resets this process's connection to member 0, writes a key member 0 owns, and waits until events flow again. */
    async function resetAndWrite(holdReconnection: boolean) {
      const lifecycleBefore = lifecycle.length;
      // Holding the new connection (blackhole for this pid) keeps the listener unregistered until the write is done.
      if (holdReconnection) proxy.blackhole(me);
      const resetAt = Date.now();
      expect(proxy.reset(me)).toBe(1);
      const during = await put();
      const writtenMs = Date.now() - resetAt;
      if (holdReconnection) proxy.heal(me);
      const probes: string[] = [];
      await eventually('events from member 0 again', async () => {
        if (probes.some((k) => events.includes(k))) return true;
        probes.push(await put());
      }, { timeoutMs: 15_000, intervalMs: 20 });
      const backMs = Date.now() - resetAt;
      // A later event arrives too; by then the one written during the reset had every chance to arrive.
      const later = await put();
      await eventually('a later event', () => events.includes(later));
      expect(proxy.connections(me)).toHaveLength(1);
      expect(lifecycle.slice(lifecycleBefore)).toEqual([]);
      return { lost: !events.includes(during), writtenMs, backMs };
    }

    try {
      const first = await put();
      await eventually('an event before any reset', () => events.includes(first));
      const plain = [];
      for (let i = 0; i < 3; i++) plain.push(await resetAndWrite(false));
      const held = await resetAndWrite(true);
      expect(held.lost).toBe(true);
      report(`reset (x3, the client reconnects by itself): write done after ${plain.map((r) => r.writtenMs).join('/')} ms, `
        + `events again after ${plain.map((r) => r.backMs).join('/')} ms, event written meanwhile lost: ${plain.map((r) => r.lost).join('/')}; `
        + `reset with the reconnection held until the write is done: lost ${held.lost}, events again ${held.backMs} ms after the reset; `
        + 'no lifecycle event in any of them');
    } finally {
      await writer.shutdown();
    }
  });

  it('freezes a member: calls it owns stall, others answer, and the stalled call completes on resume', async () => {
    const map = await client.getMap<string, string>('nemesis.freeze');
    // The earlier cases cut and reset connections: partitions may have moved since, so owners are read afresh.
    await partitionTableStable(client);
    const [onTwo] = keysOwnedBy(client, cluster.addresses, 2, 'fz-two-');
    const [onOne] = keysOwnedBy(client, cluster.addresses, 1, 'fz-one-');
    await Promise.all([map.put(onTwo, 'two'), map.put(onOne, 'one')]);

    // Bytes each proxy carried back to this process, to tell which member answered if the frozen one seems to.
    const bytesDown = () => [0, 1, 2].map((i) => cluster.proxy(i).connections({ pid: process.pid }).reduce((n, c) => n + c.bytesDown, 0));
    const table = partitionOwners(client);
    await cluster.freeze(2); // returns once every thread of the JVM has stopped
    const frozenAt = Date.now();
    const downBefore = bytesDown();
    const stalled = map.get(onTwo);
    const stalledDone = stalled.then(() => Date.now(), () => Date.now());
    const [blocked, other] = await Promise.all([within(stalled, 1500), within(map.get(onOne), 1500)]);
    const down = bytesDown().map((n, i) => n - downBefore[i]);
    const resumedAt = Date.now();
    await cluster.resume(2);
    if (blocked.settled) {
      throw new Error(`the frozen member's key ${onTwo} was answered after ${blocked.ms} ms with `
        + `${'error' in blocked ? `an error: ${String(blocked.error)}` : JSON.stringify(blocked.value)}; bytes back through `
        + `proxies 0/1/2 meanwhile ${down.join('/')}; owner now member ${ownerIndex(client, onTwo, cluster.addresses)}; `
        + `partition table ${partitionOwners(client) === table ? 'unchanged' : 'changed'}`);
    }
    expect(ownerIndex(client, onTwo, cluster.addresses)).toBe(2);
    expect(other).toMatchObject({ settled: true, value: 'one' });
    const finished = await within(stalled, 5000);
    expect(finished).toMatchObject({ settled: true, value: 'two' });
    report(`freeze: frozen member's key pending after ${blocked.ms} ms, other key answered in ${other.ms} ms; `
      + `stalled call finished ${(await stalledDone) - resumedAt} ms after resume `
      + `(${resumedAt - frozenAt} ms frozen)`);
  });

  it('kills two of three members at once: keys whose every replica was on them are lost, the rest survive', async () => {
    const map = await client.getMap<string, string>('nemesis.loss');
    const keys = Array.from({ length: 60 }, (_, i) => `loss-${i}`);
    await Promise.all(keys.map((k) => map.put(k, k)));
    const ownedBySurvivor = keys.filter((k) => ownerIndex(client, k, cluster.addresses) === 0);

    const killedAt = Date.now();
    await cluster.killMany([1, 2]);
    expect(cluster.alive()).toEqual([true, false, false]);
    await eventually('the client to see one member', () => client.getCluster().getMembers().length === 1, { timeoutMs: 30_000 });
    const survivors = await eventually('every partition to answer again', async () => {
      const read = await within(map.getAll(keys), 2000);
      return read.settled && !read.error && (read.value ?? []).map(([k]) => k);
    }, { timeoutMs: 30_000 });

    expect(survivors.length).toBeGreaterThan(0);
    expect(survivors.length).toBeLessThan(keys.length);
    expect(survivors).toEqual(expect.arrayContaining(ownedBySurvivor));
    report(`killMany([1, 2]): ${survivors.length} of ${keys.length} keys survived (${ownedBySurvivor.length} owned by the `
      + `survivor, ${survivors.length - ownedBySurvivor.length} from promoted backups), ${keys.length - survivors.length} lost; `
      + `readable again ${Date.now() - killedAt} ms after the kill`);
  });
});
