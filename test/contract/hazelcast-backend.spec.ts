import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
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
