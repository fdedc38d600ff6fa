/*
 * Which member owns a key, from a smart client's partition table, so a test can aim a fault at the member behind
 * a key (blackhole the proxy of the member that owns the permit, freeze the owner of a definition, ...).
 */
import type { Client } from 'hazelcast-client';
import { eventually } from '../support/eventually';

/** Index in `addresses` (as members advertise them: the proxies when proxied) of the member owning `key`. */
export function ownerIndex(client: Client, key: unknown, addresses: string[]): number {
  const partitions = client.getPartitionService();
  const owner = partitions.getPartitionOwner(partitions.getPartitionId(key));
  const member = client.getCluster().getMembers().find((m) => m.uuid.toString() === owner?.toString());
  if (!member) throw new Error(`no member known to own ${String(key)} (partition owner ${String(owner)})`);
  const index = addresses.indexOf(`${member.address.host}:${member.address.port}`);
  if (index < 0) throw new Error(`owner ${member.address.host}:${member.address.port} of ${String(key)} is not in ${addresses.join(', ')}`);
  return index;
}

/**
 * Waits until the client has a partition table that names an owner for every partition. Members assign
 * partitions on the first data operation, so this makes one.
 */
export async function partitionTableReady(client: Client, timeoutMs = 10_000): Promise<void> {
  await (await client.getMap('harness.partition-probe')).size();
  await eventually('the partition table', () => {
    const partitions = client.getPartitionService();
    const count = partitions.getPartitionCount();
    if (count === 0) return false;
    for (let p = 0; p < count; p++) if (!partitions.getPartitionOwner(p)) return false;
    return true;
  }, { timeoutMs });
}

/**
 * Waits until the partition table has stopped changing (two readings `quietMs` apart agree): right after members
 * join, partitions still migrate, and a key's owner read too early may not own it a moment later.
 */
export async function partitionTableStable(client: Client, { quietMs = 1_000, timeoutMs = 30_000 } = {}): Promise<void> {
  await partitionTableReady(client, timeoutMs);
  let last = partitionOwners(client);
  await eventually('the partition table to settle', async () => {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const now = partitionOwners(client);
    const settled = now === last;
    last = now;
    return settled;
  }, { timeoutMs, intervalMs: 0 });
}

/** The client's partition table as one string (each partition's owner), to compare two moments. */
export function partitionOwners(client: Client): string {
  const partitions = client.getPartitionService();
  return Array.from({ length: partitions.getPartitionCount() }, (_, p) => String(partitions.getPartitionOwner(p))).join(',');
}

/** The first `count` keys `${prefix}0`, `${prefix}1`, ... that member `index` owns. */
export function keysOwnedBy(client: Client, addresses: string[], index: number, prefix: string, count = 1): string[] {
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i++) {
    if (i > 10_000) throw new Error(`member ${index} owns fewer than ${count} of 10000 keys ${prefix}*`);
    const key = `${prefix}${i}`;
    if (ownerIndex(client, key, addresses) === index) keys.push(key);
  }
  return keys;
}
