import { existsSync } from 'node:fs';
import { Injectable } from '@nestjs/common';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { ClusterSingleton, GatekeeperModule } from '../../lib';
import { cli, CLI_BIN as BIN } from '../support/cli-process';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';
import { uniquePrefix } from '../support/test-cluster';

/** The quickstart's billing job, every second here, with the minute's permit it has there. */
@Injectable()
class BillingJobs {
  readonly runs: number[] = [];

  @Cron('* * * * * *')
  @ClusterSingleton('billing', '1m')
  charge(): void {
    this.runs.push(Date.now());
  }
}

/**
 * A team's first deploy on a store nothing used yet, after the getting-started page's own commands: the first tick
 * runs, with no recovery wait (which would be the permit's minute). A fresh Redis cannot be told from one that lost
 * everything, so its commands include `store init`; PostgreSQL makes its schema at the first start and needs none.
 */
describe('the first deploy on a new store runs its first tick at once', () => {
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first (npm test does)`);
  });

  async function firstTick(options: Parameters<typeof GatekeeperModule.forRoot>[0]): Promise<{ afterMs: number; logger: CapturingLogger }> {
    const logger = new CapturingLogger();
    const app = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), GatekeeperModule.forRoot({ ...options, identity: { group: 'production', acquirer: 'app-1' }, membership: false })],
      providers: [BillingJobs],
    }).setLogger(logger).compile();
    const startedAt = Date.now();
    await app.init();
    try {
      // One tick is a second; the bound leaves room for a loaded machine and is far below the minute a wait would take.
      const first = await eventually('the first run', () => app.get(BillingJobs).runs[0], { timeoutMs: 15_000, intervalMs: 50 });
      return { afterMs: first - startedAt, logger };
    } finally {
      await app.close();
    }
  }

  it('Redis, after `npx nestjs-gatekeeper --backend redis store init`', async () => {
    const mapPrefix = uniquePrefix('first-redis');
    const env = { GATEKEEPER_REDIS_URL: testRedisUrl(), GATEKEEPER_BACKEND: undefined, GATEKEEPER_PG_URL: undefined, GATEKEEPER_HZ_MEMBERS: undefined };
    const init = await cli(['--backend', 'redis', '--map-prefix', mapPrefix, 'store', 'init'], env);
    expect([init.code, init.stdout.trim()]).toEqual([0, `Declared Redis prefix "${mapPrefix}" new: first grants need no recovery wait.`]);
    const { afterMs, logger } = await firstTick({ backend: 'redis', redis: { mapPrefix } });
    process.stdout.write(`first deploy on Redis: the first run ${afterMs} ms after start\n`);
    expect(afterMs).toBeLessThan(15_000);
    expect(logger.entries.filter((e) => e.level === 'warn' || e.level === 'error').map((e) => e.message)).toEqual([]);
  });

  it('PostgreSQL, on a database the library never used', async () => {
    const schema = `first_${Date.now().toString(36)}`;
    const { afterMs, logger } = await firstTick({ backend: 'postgres', postgres: { connectionString: testPostgresUrl(), schema } });
    process.stdout.write(`first deploy on PostgreSQL: the first run ${afterMs} ms after start\n`);
    expect(afterMs).toBeLessThan(15_000);
    expect(logger.entries.filter((e) => e.level === 'warn' || e.level === 'error').map((e) => e.message)).toEqual([]);
  });
});
