import { existsSync } from 'node:fs';
import type { NodeProcess } from '../harness';
import { CLI_BIN } from './cli-process';
import { testPostgresUrl } from './test-postgres';
import { testRedisUrl } from './test-redis';

/** The stores a move test moves between. */
export type MoveKind = 'postgres' | 'redis' | 'hazelcast';

/**
 * What a test of `store move` (the built CLI) between `from` and `to` shares: the test run's servers, the nodes and
 * clients it started (killed and closed after each test), and the CLI's environment, which reaches the shared member
 * only where the move involves Hazelcast. Call it inside the `describe`.
 */
export function useMoveTest(from: MoveKind, to: MoveKind) {
  const pgUrl = testPostgresUrl();
  const redisUrl = testRedisUrl();
  const nodes: NodeProcess[] = [];
  const closing: Array<() => Promise<void>> = [];
  const env = { GATEKEEPER_BACKEND: undefined, GATEKEEPER_PG_URL: pgUrl, GATEKEEPER_REDIS_URL: redisUrl, ...(from !== 'hazelcast' && to !== 'hazelcast' && { GATEKEEPER_HZ_MEMBERS: undefined }) };
  beforeAll(() => {
    if (!existsSync(CLI_BIN)) throw new Error(`${CLI_BIN} is missing: run npm run build first (npm test does)`);
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.kill()));
    await Promise.all(closing.splice(0).map((close) => close()));
  });
  return { pgUrl, redisUrl, nodes, closing, env };
}
