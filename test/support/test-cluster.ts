import { randomUUID } from 'node:crypto';
import type { ClientConfig } from 'hazelcast-client';

/** The cluster the global setup started (or the one GATEKEEPER_HZ_MEMBERS names). */
export function testCluster(): { clusterName: string; addresses: string[] } {
  const members = process.env.GATEKEEPER_HZ_MEMBERS;
  if (!members) throw new Error('GATEKEEPER_HZ_MEMBERS is not set: run tests through jest (its global setup starts a member)');
  return { clusterName: process.env.GATEKEEPER_HZ_CLUSTER_NAME ?? 'dev', addresses: members.split(',') };
}

/** Client config for the test cluster, quiet and quick to give up. */
export function testClientConfig(): ClientConfig {
  const { clusterName, addresses } = testCluster();
  return {
    clusterName,
    network: { clusterMembers: addresses },
    connectionStrategy: { connectionRetry: { clusterConnectTimeoutMillis: 10_000 } },
    properties: { 'hazelcast.logging.level': 'OFF' },
  };
}

/** A map prefix no other test shares, so tests never see each other's data. */
export function uniquePrefix(label: string): string {
  return `test-${label}-${randomUUID().slice(0, 8)}`;
}

/**
 * A client of the test cluster for the whole describe block (opened before it, shut down after), for planting
 * values the library did not write. Call inside `describe`.
 */
export function useRawClient(): () => import('hazelcast-client').Client {
  let raw: import('hazelcast-client').Client | undefined;
  beforeAll(async () => {
    const { Client } = await import('hazelcast-client');
    raw = await Client.newHazelcastClient(testClientConfig());
  });
  afterAll(async () => {
    await raw?.shutdown();
  });
  return () => raw!;
}
