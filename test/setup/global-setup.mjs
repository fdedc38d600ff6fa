// Starts one real Hazelcast member for the whole run, unless GATEKEEPER_HZ_MEMBERS points at an existing
// cluster. Workers are forked after this runs, so they inherit the environment variables set here.
import { clusterFromEnv, startCluster } from '../../scripts/hazelcast.mjs';
import { declareFreshCluster } from '../../scripts/fresh-cluster.mjs';
import { postgresFromEnv, startPostgres } from '../../scripts/postgres.mjs';
import { redisFromEnv, startRedis } from '../../scripts/redis.mjs';
import { mariadbFromEnv, startMariadb } from '../../scripts/mariadb.mjs';
import { buildConsole } from '../../scripts/build-console.mjs';
import { createRequire } from 'node:module';

const { warm } = createRequire(import.meta.url)('../../scripts/ts-cache.cjs');

export default async function globalSetup() {
  // The real processes the tests start run the repository's TypeScript through scripts/ts-register.cjs: transpiled
  // once here (or found unchanged in the cache) rather than by every process, several of which boot at once.
  warm(['lib', 'test', 'sample-app']);
  // The web console the tests' apps serve (from dist/console): built from the sources under test, not a stale build.
  await buildConsole();
  // A PostgreSQL server for the PostgreSQL backend's tests, unless GATEKEEPER_PG_URL names one.
  if (!postgresFromEnv()) {
    const postgres = await startPostgres();
    globalThis.__GATEKEEPER_TEST_POSTGRES__ = postgres;
    process.env.GATEKEEPER_PG_URL = postgres.url;
  }
  // A Redis server for the Redis backend's tests, unless GATEKEEPER_REDIS_URL names one.
  if (!redisFromEnv()) {
    const redis = await startRedis();
    globalThis.__GATEKEEPER_TEST_REDIS__ = redis;
    process.env.GATEKEEPER_REDIS_URL = redis.url;
  }
  // A MariaDB server for the fenced writes' MySQL tests, unless GATEKEEPER_MYSQL_URL names one (MySQL or MariaDB).
  if (!mariadbFromEnv()) {
    const mariadb = await startMariadb();
    globalThis.__GATEKEEPER_TEST_MARIADB__ = mariadb;
    process.env.GATEKEEPER_MYSQL_URL = mariadb.url;
  }
  if (clusterFromEnv()) return;
  const cluster = await startCluster({ members: 1, logDir: '.cache/test-logs' });
  // This run started the member itself: nothing was ever granted on it, so first grants need no recovery wait.
  await declareFreshCluster(cluster);
  globalThis.__GATEKEEPER_TEST_CLUSTER__ = cluster;
  process.env.GATEKEEPER_HZ_MEMBERS = cluster.addresses.join(',');
  process.env.GATEKEEPER_HZ_CLUSTER_NAME = cluster.clusterName;
}
