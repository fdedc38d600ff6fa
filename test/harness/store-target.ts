/**
 * Where a fixture node keeps its state: a Hazelcast cluster (its name and the addresses clients use), a
 * PostgreSQL server (its connection string) or a Redis server (its URL). Node processes learn it from their environment (`storeTargetEnv`),
 * and `gatekeeperOptionsFromEnv` (test/fixtures/fixture-process.ts) turns it back into module options.
 */
export type StoreTarget = { clusterName: string; addresses: string[] } | { postgresUrl: string } | { redisUrl: string };

/** The environment that tells a fixture node process its store. */
export function storeTargetEnv(target: StoreTarget): NodeJS.ProcessEnv {
  if ('postgresUrl' in target) return { GATEKEEPER_BACKEND: 'postgres', GATEKEEPER_PG_URL: target.postgresUrl };
  if ('redisUrl' in target) return { GATEKEEPER_BACKEND: 'redis', GATEKEEPER_REDIS_URL: target.redisUrl };
  return { GATEKEEPER_HZ_MEMBERS: target.addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: target.clusterName };
}
