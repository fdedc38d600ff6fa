import { Client, type ClientConfig } from 'hazelcast-client';
import { declareFreshCluster } from '../../lib/testing';

/** Declares a cluster the test has just started itself as brand new (no recovery wait before its first grants). */
export async function declareFresh(config: ClientConfig): Promise<void> {
  const client = await Client.newHazelcastClient(config);
  try {
    await declareFreshCluster(client);
  } finally {
    await client.shutdown();
  }
}
