/**
 * The PostgreSQL server of the test run: the one `test/setup/global-setup.mjs` started (`scripts/postgres.mjs`), or
 * the one GATEKEEPER_PG_URL names.
 */
export function testPostgresUrl(): string {
  const url = process.env.GATEKEEPER_PG_URL;
  if (!url) throw new Error('GATEKEEPER_PG_URL is not set: run the tests through jest (its global setup starts a server) or point it at one');
  return url;
}
