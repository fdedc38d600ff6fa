export default async function globalTeardown() {
  await globalThis.__GATEKEEPER_TEST_CLUSTER__?.stop();
  await globalThis.__GATEKEEPER_TEST_POSTGRES__?.stop();
  await globalThis.__GATEKEEPER_TEST_REDIS__?.stop();
  await globalThis.__GATEKEEPER_TEST_MARIADB__?.stop();
}
