import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { SCHEMA_VERSION } from '../../lib/backends/postgres/postgres-schema';
import { systemClock } from '../../lib/core/clock';
import { cli, CLI_BIN as BIN } from '../support/cli-process';
import { testPostgresUrl } from '../support/test-postgres';
import { uniquePrefix } from '../support/test-cluster';

/**
 * The operator's command line on PostgreSQL (`--backend postgres --pg-url`, or GATEKEEPER_BACKEND and
 * GATEKEEPER_PG_URL): the same commands over the same records an app writes, and `store migrate` for the schema.
 */
/** The environment of a shell that names no store (the test run's names all three). */
const NO_STORE = { GATEKEEPER_BACKEND: undefined, GATEKEEPER_PG_URL: undefined, GATEKEEPER_REDIS_URL: undefined, GATEKEEPER_HZ_MEMBERS: undefined, GATEKEEPER_HZ_CLUSTER_NAME: undefined };
function withoutStores(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(NO_STORE)) delete env[key];
  return env;
}

describe('nestjs-gatekeeper CLI on PostgreSQL (built binary, real server)', () => {
  const url = testPostgresUrl();
  const mapPrefix = uniquePrefix('cli-pg');
  const env = { GATEKEEPER_BACKEND: 'postgres', GATEKEEPER_PG_URL: url };
  const run = (...args: string[]) => cli(['--map-prefix', mapPrefix, ...args], env);
  const json = async (...args: string[]) => {
    const result = await run('--json', ...args);
    expect([result.code, result.stderr]).toEqual([0, '']);
    return JSON.parse(result.stdout);
  };
  const closing: Array<() => Promise<void>> = [];
  afterAll(async () => {
    await Promise.all(closing.map((close) => close()));
  });

  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first (npm test does)`);
  });

  it('edits definitions, and shows the permits an app holds', async () => {
    expect((await run('set', 'billing', '--duration', '30s', '--permits', '2')).code).toBe(0);
    expect(await json('pause', 'billing')).toMatchObject({ permits: 0, pausedFrom: 2 });
    expect(await json('resume', 'billing')).toMatchObject({ permits: 2 });
    // An app node on the same records holds a permit: the CLI sees it, and force-releases it.
    const store = new PermitRecordStore(new PostgresBackend({ connectionString: url, mapPrefix }));
    await store.connect({ clock: systemClock });
    closing.push(() => store.close());
    const granted = await new PermitEngine(store, { acquirer: 'app-1', group: 'production', instance: 'app-1/1' }, systemClock).tryAcquire('billing');
    if (!granted.granted) throw new Error(granted.message);
    expect((await run('permits', 'billing')).stdout).toMatch(new RegExp(`billing\\s+app-1\\s+production\\s+${granted.permit.fencingToken}`));
    expect(await json('release', 'billing', String(granted.permit.fencingToken))).toMatchObject({ released: 'billing' });
    expect((await json('permits', 'billing'))[0].permits).toEqual([]);
    expect((await json('list')).map((d: { name: string }) => d.name)).toEqual(['billing']);
  });

  it('runs without hazelcast-client installed (the preload refuses the package)', async () => {
    const block = join(__dirname, '../fixtures/without-hazelcast-client.cjs');
    const { stdout } = await promisify(execFile)(process.execPath, ['-r', block, BIN, '--map-prefix', mapPrefix, '--json', 'list'], { env: { ...process.env, ...env } });
    expect(JSON.parse(stdout).map((d: { name: string }) => d.name)).toEqual(['billing']);
  });

  it('finds the store from GATEKEEPER_PG_URL alone, as the app reads it; refuses to guess between two stores', async () => {
    const only = await cli(['--map-prefix', mapPrefix, '--json', 'list'], { ...NO_STORE, GATEKEEPER_PG_URL: url });
    expect([only.code, only.stderr]).toEqual([0, '']);
    expect(JSON.parse(only.stdout).map((d: { name: string }) => d.name)).toEqual(['billing']);
    const both = await cli(['list'], { ...NO_STORE, GATEKEEPER_PG_URL: url, GATEKEEPER_REDIS_URL: 'redis://127.0.0.1:1/0' });
    expect(both.code).toBe(2);
    expect(both.stderr.trim().split('\n')[0]).toContain('say which with --backend postgres|redis (or GATEKEEPER_BACKEND)');
    // A store named on the command line wins over the environment's.
    const flag = await cli(['--pg-url', url, '--map-prefix', mapPrefix, '--json', 'list'], { ...NO_STORE, GATEKEEPER_REDIS_URL: 'redis://127.0.0.1:1/0' });
    expect([flag.code, flag.stderr]).toEqual([0, '']);
  });

  it('without hazelcast-client and with no store named, one line names the variables and flags of the other stores', async () => {
    const block = join(__dirname, '../fixtures/without-hazelcast-client.cjs');
    const failed = await promisify(execFile)(process.execPath, ['-r', block, BIN, 'list'], { env: withoutStores() }).catch((error: { code: number; stderr: string }) => error);
    expect('code' in failed && failed.code).toBe(2);
    expect(failed.stderr).toContain('hazelcast-client is not installed');
    expect(failed.stderr).toContain('GATEKEEPER_PG_URL');
    expect(failed.stderr).not.toContain('require stack');
  });

  it('names --pg-url when --backend postgres has no connection string, having contacted nothing', async () => {
    const result = await cli(['--backend', 'postgres', 'list'], { GATEKEEPER_PG_URL: '' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--pg-url');
    expect((await cli(['--backend', 'mysql', 'list'])).stderr).toContain("invalid --backend: 'mysql' is not hazelcast, postgres or redis");
  });

  it('declares a new schema new (made now), refuses one in use, and says an unreachable server where it was looked for (no password shown)', async () => {
    const schema = `cli_new_${Date.now().toString(36)}`;
    try {
      const init = await run('--pg-schema', schema, 'store', 'init');
      expect([init.code, init.stdout]).toEqual([0, `Declared PostgreSQL schema "${schema}" new: first grants need no recovery wait.\n`]);
      const again = await run('--pg-schema', schema, 'store', 'init');
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`PostgreSQL schema "${schema}" is in use already`);
    } finally {
      const admin = new Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => admin.end());
    }
    const away = await cli(['--backend', 'postgres', '--pg-url', 'postgres://someone:secret@127.0.0.1:1/db', '--connect-timeout', '1s', 'list']);
    expect(away.code).toBe(3);
    expect(away.stderr).toContain('cannot reach PostgreSQL at postgres://someone:***@127.0.0.1:1/db');
    expect(away.stderr).not.toContain('secret');
  });

  it('store migrate creates the schema, then has nothing to do, and refuses a newer one; every command works in it', async () => {
    const schema = `cli_${Date.now().toString(36)}`;
    expect(await json('--pg-schema', schema, 'store', 'migrate')).toEqual({ schema, from: 0, to: SCHEMA_VERSION });
    const again = await run('--pg-schema', schema, 'store', 'migrate');
    expect([again.code, again.stdout]).toEqual([0, `Schema "${schema}" is at version ${SCHEMA_VERSION}, this version's: nothing to do.\n`]);
    // An app with postgres.schema of its own is in reach of every command, by flag or by the variable.
    expect((await run('--pg-schema', schema, 'set', 'elsewhere', '--duration', '30s')).code).toBe(0);
    const inSchema = await cli(['--map-prefix', mapPrefix, '--json', 'list'], { ...env, GATEKEEPER_PG_SCHEMA: schema });
    expect(JSON.parse(inSchema.stdout).map((d: { name: string }) => d.name)).toEqual(['elsewhere']);
    expect((await json('list')).map((d: { name: string }) => d.name)).not.toContain('elsewhere');
    const admin = new Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`UPDATE ${schema}.schema_version SET version = 99`);
      const refused = await run('--pg-schema', schema, 'store', 'migrate');
      expect(refused.code).toBe(1); // rejected: the server was reached
      expect(refused.stderr).toContain(`schema "${schema}" is at version 99, newer than this version of nestjs-gatekeeper knows (${SCHEMA_VERSION}): run the CLI of the version the apps run`);
      expect(refused.stderr).not.toContain('is the server running');
      const listed = await run('--pg-schema', schema, 'list');
      expect([listed.code, listed.stderr]).toEqual([1, expect.stringContaining('npx nestjs-gatekeeper@<version>')]);
    } finally {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
