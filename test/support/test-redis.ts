/**
 * The Redis server of the test run: the one `test/setup/global-setup.mjs` started (`scripts/redis.mjs`), or the one
 * GATEKEEPER_REDIS_URL names.
 */
export function testRedisUrl(): string {
  const url = process.env.GATEKEEPER_REDIS_URL;
  if (!url) throw new Error('GATEKEEPER_REDIS_URL is not set: run the tests through jest (its global setup starts a server) or point it at one');
  return url;
}
