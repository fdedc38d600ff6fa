/*
 * Every environment variable the library reads, in one place: the module's at start-up and the CLI's. Code reads
 * them through these names (`env[ENV.pgUrl]`, commander's `.env(ENV.backend)`), and a test holds the docs to them
 * (test/unit/docs-match-code.spec.ts), so a variable is added here or nowhere.
 */

/** The environment variables the library reads, each by what it sets. */
export const ENV = {
  /** PostgreSQL's connection string: the module's when the `postgres` option names no connection; the CLI's `--pg-url`. */
  pgUrl: 'GATEKEEPER_PG_URL',
  /** The CLI's `--pg-schema`: the module's `postgres.schema` (the schema the library's tables are in). */
  pgSchema: 'GATEKEEPER_PG_SCHEMA',
  /** Redis's URL: the module's when the `redis` option names no connection; the CLI's `--redis-url`. */
  redisUrl: 'GATEKEEPER_REDIS_URL',
  /** Hazelcast's members (comma-separated `host:port`) where `hazelcast.clientConfig` names none; the CLI's `--members`. */
  hzMembers: 'GATEKEEPER_HZ_MEMBERS',
  /** Hazelcast's cluster name where `hazelcast.clientConfig` names none; the CLI's `--cluster-name`. */
  hzClusterName: 'GATEKEEPER_HZ_CLUSTER_NAME',
  /** The admin API's token when `admin` gives neither `token` nor `guard`; the one the CLI sends (`--admin-token`). */
  adminToken: 'GATEKEEPER_ADMIN_TOKEN',
  /** The CLI's `--backend`: the store it works on. */
  backend: 'GATEKEEPER_BACKEND',
  /** The CLI's `--map-prefix`: the module's `mapPrefix` of the store. */
  mapPrefix: 'GATEKEEPER_MAP_PREFIX',
  /** The CLI's `--admin-path`: the app's `admin.path`. */
  adminPath: 'GATEKEEPER_ADMIN_PATH',
  /** The Hazelcast version the CLI's `hazelcast start` runs. */
  hzVersion: 'GATEKEEPER_HZ_VERSION',
  /** The Maven repository `hazelcast start` downloads the member's jar from (else Maven Central). */
  mavenRepository: 'GATEKEEPER_MAVEN_REPOSITORY',
  /** Where `hazelcast start` keeps the jars it downloaded. */
  cacheDir: 'GATEKEEPER_CACHE_DIR',
} as const;
