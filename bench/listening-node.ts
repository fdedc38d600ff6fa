/*
 * The decision rows' other node, run as a process of its own (bench/run.ts): a permit store on the bench member
 * whose view listens to the semaphore map, as every other replica's does in production. In the bench process it
 * would decode each of the holder's writes on the holder's own event loop and count against its latency; here, as
 * in a real deployment, that work is another process's. It hears the listened floor row's writes the same way.
 * Prints READY once listening; SIGTERM closes it.
 */
import { systemClock } from '../lib/core/clock';
import { HazelcastPermitStore } from '../lib/cli/hazelcast-permit.store';
import { env } from '../test/fixtures/fixture-process';

async function main(): Promise<void> {
  const store = new HazelcastPermitStore({
    clientConfig: { clusterName: env('GATEKEEPER_HZ_CLUSTER_NAME'), network: { clusterMembers: env('GATEKEEPER_HZ_MEMBERS').split(',') }, properties: { 'hazelcast.logging.level': 'OFF' } },
    mapPrefix: env('MAP_PREFIX'),
  });
  await store.connect({ clock: systemClock });
  process.once('SIGTERM', () => void store.close().finally(() => process.exit(0)));
  process.stdout.write('READY\n');
}

void main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
