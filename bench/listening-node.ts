/*
 * The decision rows' other node, run as a process of its own (bench/run.ts): a permit store on the bench member
 * whose view listens to the semaphore map, as every other replica's does in production. In the bench process it
 * would decode each of the holder's writes on the holder's own event loop and count against its latency; here, as
 * in a real deployment, that work is another process's. With LISTENED_MAP it also listens, with values, to that
 * raw map as a node's view does (the listened floor row). Prints READY once listening; SIGTERM closes it.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'hazelcast-client';
import { systemClock } from '../lib/core/clock';
import { HazelcastPermitStore } from '../lib/permits/hazelcast-permit.store';
import { writtenByOthers } from '../lib/permits/hazelcast-semaphore-listeners';
import { env } from '../test/fixtures/fixture-process';

async function main(): Promise<void> {
  const store = new HazelcastPermitStore({
    clientConfig: { clusterName: env('GATEKEEPER_HZ_CLUSTER_NAME'), network: { clusterMembers: env('GATEKEEPER_HZ_MEMBERS').split(',') }, properties: { 'hazelcast.logging.level': 'OFF' } },
    mapPrefix: env('MAP_PREFIX'),
  });
  await store.connect({ clock: systemClock });
  const listened = process.env.LISTENED_MAP;
  if (listened) {
    const client = await Client.newHazelcastClient({ clusterName: env('GATEKEEPER_HZ_CLUSTER_NAME'), network: { clusterMembers: env('GATEKEEPER_HZ_MEMBERS').split(',') }, properties: { 'hazelcast.logging.level': 'OFF' } });
    let heard = 0;
    // As a node's view listens (see lib/permits/hazelcast-semaphore-listeners.ts): with the predicate that leaves out its own writes, and
    // removals apart; this node writes nothing, so it is sent every write.
    const map = await client.getMap<string, string>(listened);
    await map.addEntryListenerWithPredicate({ added: (e) => (heard += e.value.length), updated: (e) => (heard += e.value.length) }, writtenByOthers(randomUUID()), undefined, true);
    await map.addEntryListener({ removed: () => heard++ }, undefined, false);
    process.once('SIGTERM', () => void client.shutdown());
  }
  process.once('SIGTERM', () => void store.close().finally(() => process.exit(0)));
  process.stdout.write('READY\n');
}

void main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
