import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { validateDefinition } from '../../lib/permits/definition.validator';
import type { SemaphoreEntry } from '../../lib/permits/semaphore-entry';
import { encodeEntry } from '../../lib/permits/semaphore-entry.codec';
import { encodeScheduleRecord } from '../../lib/schedules/schedule-record.codec';
import { writeIdsOf } from '../../lib/store/write-ids';
import { describeBackendContract, describeStoreContracts } from '../../lib/testing';
import { ControlledCluster } from '../support/cluster-control';
import { declareFresh } from '../support/fresh-cluster';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix, useRawClient } from '../support/test-cluster';

/** Two backends on connections of their own, as two nodes have. */
function twoNodes(clientConfig: () => import('hazelcast-client').ClientConfig, mapPrefix: string): [HazelcastBackend, HazelcastBackend] {
  const node = () => new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: clientConfig() }), mapPrefix, callTimeoutMs: 5_000 });
  return [node(), node()];
}

describe('against the shared test member', () => {
  const raw = useRawClient();

  // The primitives and every capability store over them, each test on maps of a prefix of its own.
  describeStoreContracts('hazelcast', async () => {
    const mapPrefix = uniquePrefix('backend');
    return {
      backends: twoNodes(testClientConfig, mapPrefix),
      async close() {
        const maps = (await raw().getDistributedObjects()).filter((object) => object.getName().startsWith(`${mapPrefix}.`));
        await Promise.all(maps.map((map) => map.destroy()));
      },
    };
  }, { timeoutMs: 120_000 });

  // The contract lets a backend send a node its own values; this one must not, or every write of hold mode costs
  // its writer an event: the member-side filter has to recognise the library's own records, not only test values.
  it("leaves its own semaphore entries and schedule records out of its feed, and another node's in", async () => {
    const mapPrefix = uniquePrefix('own-writes');
    const [a, b] = twoNodes(testClientConfig, mapPrefix);
    await a.open();
    await b.open();
    try {
      const [ma, mb] = [await a.map('own'), await b.map('own')];
      const heard: Array<[string, string | null]> = [];
      const stop = await ma.watch({ changed: (key, value) => heard.push([key, value]), missed: () => undefined }, { exceptMark: writeIdsOf(a).mark });
      const entry: SemaphoreEntry = {
        revision: 3, writeId: writeIdsOf(a).next(), definition: validateDefinition({ name: 'nightly-export', duration: '10m' }), lastToken: 3,
        permits: [{ semaphore: 'nightly-export', acquirer: 'a', group: 'default', instance: 'a/1', fencingToken: 3, grantedAt: 1, refreshedAt: 2, expiresAt: 3 }],
      };
      const schedule = { id: 'reports.nightly-ledger-export', revision: 1, updatedAt: Date.now(), updatedBy: 'eu-west-1/replica-7f9c', writeId: writeIdsOf(a).next(), definition: null };
      const mine = { entry: encodeEntry(entry), schedule: encodeScheduleRecord(schedule) };
      const theirs = { entry: encodeEntry({ ...entry, revision: 4, writeId: writeIdsOf(b).next() }), schedule: encodeScheduleRecord({ ...schedule, revision: 2, writeId: writeIdsOf(b).next() }) };
      for (const key of ['entry', 'schedule'] as const) {
        await ma.create(key, mine[key]);
        // One key's events come in order: had the own write been sent, it would be heard before the other node's.
        await mb.replace({ key, value: mine[key] }, theirs[key]);
      }
      await eventually("the other node's writes heard", () => heard.length >= 2, { timeoutMs: 10_000 });
      await stop();
      expect(heard.sort()).toEqual([['entry', theirs.entry], ['schedule', theirs.schedule]]);
    } finally {
      await Promise.all([a.close(), b.close()]);
      const maps = (await raw().getDistributedObjects()).filter((object) => object.getName().startsWith(`${mapPrefix}.`));
      await Promise.all(maps.map((map) => map.destroy()));
    }
  }, 60_000);
});

describe('against a member of its own, restarted to lose its data', () => {
  let cluster: ControlledCluster;
  beforeAll(async () => {
    cluster = await ControlledCluster.start(1);
    await declareFresh(cluster.clientConfig());
  });
  afterAll(async () => {
    await cluster?.quit();
  });

  describeBackendContract('hazelcast, data lost by a restart', async () => {
    const backends = twoNodes(() => cluster.clientConfig(), uniquePrefix('backend'));
    return {
      backends,
      async loseData() {
        await cluster.stopAll();
        await cluster.startAll();
        // The nodes' clients reconnect by themselves: the loss is done once each answers again, as its next call would.
        for (const backend of backends) {
          await eventually('the node answering after the restart', async () => (await (await backend.map('reconnected')).get('probe', { timeoutMs: 1_000 })) === undefined, { timeoutMs: 30_000 });
        }
      },
      close: async () => undefined,
    };
  }, { timeoutMs: 90_000, eventTimeoutMs: 30_000 });
});
