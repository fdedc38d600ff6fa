// Declares a cluster this script's caller has just started as brand new: writes every partition's canary marked
// `fresh`, so the library's first grants on it need no recovery wait (see lib/backends/hazelcast/hazelcast-partition-canaries.ts,
// whose key scheme and value format this mirrors; a contract test checks the two agree). Never call it for a
// cluster that may have held permits before: on a restarted cluster the wait is what keeps two holders apart.
import hz from 'hazelcast-client';

const CANARY_MAP = '__gatekeeper.partition-canaries';
const CANARY_KEY_PREFIX = 'gatekeeper-canary-';

/** @param {{ clusterName: string, addresses: string[] }} cluster */
export async function declareFreshCluster({ clusterName, addresses }) {
  const client = await hz.Client.newHazelcastClient({
    clusterName,
    network: { clusterMembers: addresses },
    properties: { 'hazelcast.logging.level': 'OFF' },
  });
  try {
    const map = await client.getMap(CANARY_MAP);
    await map.size(); // any call: the partition table arrives with it
    const partitions = client.getPartitionService();
    const count = partitions.getPartitionCount();
    const keys = new Array(count);
    for (let n = 0, found = 0; found < count; n++) {
      const key = `${CANARY_KEY_PREFIX}${n}`;
      const id = partitions.getPartitionId(key);
      if (keys[id] === undefined) {
        keys[id] = key;
        found++;
      }
    }
    const value = JSON.stringify({ v: 1, createdAt: Date.now(), fresh: true });
    await Promise.all(keys.map((key) => map.putIfAbsent(key, value)));
  } finally {
    await client.shutdown();
  }
}
