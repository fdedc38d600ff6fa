import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  ClusterSingleton, DenyReason, GatekeeperModule, GatekeeperService, InvalidInputError, SemaphoreAdminService, NotFoundError,
} from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';

/**
 * The operator's tools moved from GatekeeperService to SemaphoreAdminService (issue 40): the new service does what
 * the old methods did, and the old ones, deprecated until 0.2.0, still answer through it. Memory store, one node.
 */
/** A job that keeps its permit from tick to tick (every 10 s, a minute's permit), and a daily one with a 10-minute permit. */
@Injectable()
class TickingJobs {
  @Cron('*/10 * * * * *')
  @ClusterSingleton('billing', '1m')
  charge(): void {}

  @Cron('0 0 2 * * *')
  @ClusterSingleton('nightly', '10m')
  report(): void {}
}

describe('a duration edit against the tick of the jobs that hold the permit (memory store)', () => {
  it("refuses, unless forced, to make a held job's permit shorter than its tick; a daily job's short permit is its design", async () => {
    const logger = new CapturingLogger();
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'memory', membership: false, identity: { group: 'production', acquirer: 'node-a' } })],
      providers: [TickingJobs],
    }).setLogger(logger).compile();
    await app.init();
    try {
      const semaphores = app.get(SemaphoreAdminService);
      // `set billing --duration 5s` on the 10-second job: its permit would lapse between ticks.
      const refused = await semaphores.updateDefinition('billing', { duration: '5s' }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InvalidInputError);
      expect((refused as InvalidInputError).field).toBe('duration');
      expect((refused as Error).message).toBe('Semaphore "billing": invalid duration: 5s is shorter than the tick of TickingJobs.charge (every 10s), which keeps its '
        + 'permit from tick to tick: it would lapse between ticks and the job would move between nodes. Give one longer than the tick (a bare number is milliseconds), or force it');
      await expect(semaphores.putDefinition({ name: 'billing', duration: '5s' })).rejects.toThrow(/5s is shorter than the tick of TickingJobs\.charge/);
      expect((await semaphores.readDefinition('billing')).durationMs).toBe(60_000);
      expect((await semaphores.updateDefinition('billing', { duration: '15s' })).durationMs).toBe(15_000);
      const below = () => logger.entries.filter((e) => e.level === 'warn' && e.message.includes('shorter than the tick')).map((e) => e.message);
      expect(below()).toEqual([]);
      // Forced here, or made where no job is known (the CLI): every node that runs the job says so, once.
      expect((await semaphores.updateDefinition('billing', { duration: '5s' }, { force: true })).durationMs).toBe(5_000);
      await eventually('the warning', () => below().length > 0);
      expect(below()).toEqual(['Semaphore "billing" now lasts 5s, shorter than the tick of TickingJobs.charge here (every 10s), which keeps its permit '
        + 'from tick to tick: the permit lapses between ticks and the job moves between nodes. Give it a duration longer than the tick']);
      // Already shorter than its tick (a day): edits to the nightly job's permit are the user's design.
      expect((await semaphores.updateDefinition('nightly', { duration: '20m' })).durationMs).toBe(1_200_000);
      await semaphores.updateDefinition('nightly', { duration: '5m' });
      expect(below()).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});

describe('SemaphoreAdminService (memory store)', () => {
  let app: TestingModule;
  let logger: CapturingLogger;
  let semaphores: SemaphoreAdminService;
  let gatekeeper: GatekeeperService;

  beforeEach(async () => {
    logger = new CapturingLogger();
    app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        backend: 'memory',
        membership: false,
        identity: { group: 'production', acquirer: 'node-a' },
        definitions: [{ name: 'billing', duration: '1m', groupPattern: 'production' }],
      })],
    }).setLogger(logger).compile();
    await app.init();
    semaphores = app.get(SemaphoreAdminService);
    gatekeeper = app.get(GatekeeperService);
  });
  afterEach(async () => {
    await app.close();
  });

  it('refuses a duration not more than twice maxClockSkew, naming the field, unless forced; changes nothing', async () => {
    const refused = await semaphores.putDefinition({ name: 'reports', duration: 900 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect((refused as InvalidInputError).field).toBe('duration');
    expect((refused as Error).message).toContain("900ms is not more than twice maxClockSkew (500ms)");
    expect(semaphores.listDefinitions().map((d) => d.name)).toEqual(['billing']);
    await expect(semaphores.updateDefinition('billing', { duration: 90 })).rejects.toThrow(/invalid duration: 90ms is not more than twice/);
    expect((await semaphores.readDefinition('billing')).durationMs).toBe(60_000);
    expect((await semaphores.updateDefinition('billing', { duration: 90 }, { force: true })).durationMs).toBe(90);
    expect((await semaphores.updateDefinition('billing', { groupPattern: 'production|dr' })).durationMs).toBe(90); // not about the duration
  });

  it('puts, reads, updates, pauses, resumes and removes a definition, and refuses a bad one', async () => {
    const created = await semaphores.putDefinition({ name: 'reports', permits: 2, duration: '5m', groupPattern: 'production|staging' });
    expect(created).toMatchObject({ name: 'reports', permits: 2, durationMs: 300_000, groupPattern: 'production|staging' });
    expect(await semaphores.readDefinition('reports')).toEqual(created);
    expect(semaphores.getDefinition('reports')).toEqual(created);
    expect(semaphores.listDefinitions().map((d) => d.name)).toEqual(['billing', 'reports']);

    expect(await semaphores.updateDefinition('reports', { permits: 3 })).toEqual({ ...created, permits: 3 });
    await expect(semaphores.updateDefinition('reports', { permits: -1 })).rejects.toThrow(InvalidInputError);
    expect((await semaphores.readDefinition('reports')).permits).toBe(3);

    expect(await semaphores.pause('reports')).toMatchObject({ permits: 0, pausedFrom: 3 });
    expect(await gatekeeper.tryAcquire('reports')).toMatchObject({ granted: false, reason: DenyReason.PAUSED });
    expect((await semaphores.resume('reports')).permits).toBe(3);
    expect((await semaphores.resume('reports', 1)).permits).toBe(1);

    expect(await semaphores.removeDefinition('reports')).toBe(true);
    expect(await semaphores.removeDefinition('reports')).toBe(false);
    await expect(semaphores.readDefinition('reports')).rejects.toThrow(NotFoundError);
    expect(semaphores.getDefinition('reports')).toBeUndefined();
  });

  it('plans a migration in a dry run without writing it, then migrates and undoes it', async () => {
    const planned = await semaphores.migrate('production', 'dr-site', { dryRun: true });
    expect(planned).toEqual([expect.objectContaining({ name: 'billing', from: 'production', to: 'dr-site' })]);
    expect((await semaphores.readDefinition('billing')).groupPattern).toBe('production');

    const report = await semaphores.migrateGroups({ fromGroup: 'production', toGroup: 'dr-site', names: ['billing'] });
    expect(report).toMatchObject({ dryRun: false, changes: [{ name: 'billing', to: 'dr-site' }] });
    expect((await semaphores.readDefinition('billing')).groupPattern).toBe('dr-site');
    expect((await semaphores.undoMigration({ names: ['billing'] })).changes).toEqual([expect.objectContaining({ name: 'billing', to: 'production' })]);
    expect((await semaphores.readDefinition('billing')).groupPattern).toBe('production');
  });

  it('reports a held permit, force-releases it (the holder loses it) and dumps the state', async () => {
    const granted = await gatekeeper.tryAcquire('billing');
    if (!granted.granted) throw new Error(`not granted: ${granted.reason}`);
    const billing = (await semaphores.permits()).find((s) => s.name === 'billing');
    expect(billing?.permits).toEqual([granted.permit]);

    expect(await semaphores.forceRelease('billing', granted.permit.fencingToken)).toBe(true);
    await eventually('the holder to lose it', async () => (await gatekeeper.refresh(granted.permit)).granted === false);
    expect(await gatekeeper.refresh(granted.permit)).toMatchObject({ granted: false, reason: DenyReason.PERMIT_LOST });

    await semaphores.dumpState();
    expect(logger.find('log', /^state .*billing/)).not.toEqual([]);
  });
});
