import { RedisBackend } from '../../lib';
import { testClientConfig } from './test-cluster';
import { testPostgresUrl } from './test-postgres';
import { testRedisUrl } from './test-redis';

/** The stores a test runs the module on: the shared member, and the test run's PostgreSQL and Redis servers. */
export type TestBackend = 'hazelcast' | 'postgres' | 'redis';

/** The module options that put every capability on `backend` under `mapPrefix`. */
export function testBackendOptions(backend: TestBackend, mapPrefix: string) {
  switch (backend) {
    case 'hazelcast':
      return { hazelcast: { clientConfig: testClientConfig(), mapPrefix } };
    case 'postgres':
      return { backend: 'postgres' as const, postgres: { connectionString: testPostgresUrl(), mapPrefix } };
    case 'redis':
      return { backend: 'redis' as const, redis: { url: testRedisUrl(), mapPrefix } };
  }
}

/**
 * Declares `mapPrefix` new where the store needs it before a first use: a new Redis prefix is a store that may have
 * lost its data until declared new (no permit before a recovery wait). The shared member's cluster was declared new
 * by the test setup, and a new PostgreSQL prefix is new by its own tables.
 */
export async function declareTestPrefix(backend: TestBackend, mapPrefix: string): Promise<void> {
  if (backend === 'redis') await new RedisBackend({ url: testRedisUrl(), mapPrefix }).declareFresh();
}
