import type { Client } from 'hazelcast-client';

/**
 * What a synchronous start does once the member list is known and an asynchronous one never does (Node client
 * 5.6/5.7): open a connection to every member and keep reconnecting to members that come and go, so each call goes
 * straight to its partition's owner (smart routing). Without it, an asyncStart client stays on its first member for
 * good, and every call to another member's partitions takes one more hop through it. Internal to the client, so
 * looked up, not assumed: a client without it keeps working through one member.
 */
export async function connectToEveryMember(client: Client): Promise<void> {
  const manager = (client as unknown as { connectionManager?: { connectToAllClusterMembers?: () => Promise<void> } }).connectionManager;
  await manager?.connectToAllClusterMembers?.().catch(() => undefined);
}
