/**
 * The MySQL/MariaDB server of the test run: the MariaDB `test/setup/global-setup.mjs` started
 * (`scripts/mariadb.mjs`), or the server GATEKEEPER_MYSQL_URL names.
 */
export function testMysqlUrl(): string {
  const url = process.env.GATEKEEPER_MYSQL_URL;
  if (!url) throw new Error('GATEKEEPER_MYSQL_URL is not set: run the tests through jest (its global setup starts a MariaDB) or point it at one');
  return url;
}
