import { Test } from '@nestjs/testing';
import { Pool } from 'pg';
import { DenyReason, GatekeeperModule, GatekeeperService, InvalidInputError, SemaphoreAdminService } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';
import { uniquePrefix } from '../support/test-cluster';

/** The module on PostgreSQL, as an application switches to it: only the backend option changes. */
describe('GatekeeperModule on PostgreSQL', () => {
  const apps: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  // The second node is given the application's own pool, as an application that already uses pg would.
  const appPool = new Pool({ connectionString: testPostgresUrl(), max: 4 });
  afterAll(async () => {
    await appPool.end();
  });

  async function node(mapPrefix: string, name: string, pool?: Pool) {
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        // The connection string comes from GATEKEEPER_PG_URL (the test run's server) when no pool is given.
        backend: 'postgres',
        postgres: pool ? { pool, mapPrefix } : { mapPrefix },
        identity: { acquirer: name },
        definitions: [{ name: 'pg-report', duration: '30s' }],
      })],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    apps.push(app);
    return app;
  }

  it('grants a permit to one node, denies the other, hands it over on release with a larger token, and takes live edits', async () => {
    const mapPrefix = uniquePrefix('pg-module');
    const [a, b] = [await node(mapPrefix, 'node-a'), await node(mapPrefix, 'node-b', appPool)];
    const [ga, gb] = [a.get(GatekeeperService), b.get(GatekeeperService)];

    const held = await ga.tryAcquire('pg-report');
    expect(held.granted).toBe(true);
    const denied = await gb.tryAcquire('pg-report');
    expect(denied).toMatchObject({ granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
    if (!held.granted) throw new Error('not granted');
    await ga.release(held.permit);
    const taken = await gb.tryAcquire('pg-report');
    expect(taken.granted).toBe(true);
    if (taken.granted) expect(taken.permit.fencingToken).toBeGreaterThan(held.permit.fencingToken);

    // A live edit on one node: a second permit, which the other node is granted.
    expect((await ga.tryAcquire('pg-report')).granted).toBe(false);
    await b.get(SemaphoreAdminService).putDefinition({ name: 'pg-report', permits: 2, duration: '30s' });
    await eventually('the edit granting node-a the second permit', async () => (await ga.tryAcquire('pg-report')).granted, { timeoutMs: 10_000 });
  });

  it("refuses to start on 'postgres' without a connection, naming the option and the variable", async () => {
    const url = process.env.GATEKEEPER_PG_URL;
    delete process.env.GATEKEEPER_PG_URL;
    try {
      const started = Test.createTestingModule({ imports: [GatekeeperModule.forRoot({ backend: 'postgres' })] })
        .setLogger(new CapturingLogger()).compile().then(async (app) => {
          apps.push(app);
          await app.init();
        });
      const error = await started.then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(/invalid postgres: .*GATEKEEPER_PG_URL/);
    } finally {
      process.env.GATEKEEPER_PG_URL = url;
    }
  });
});
