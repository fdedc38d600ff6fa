import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton, InvalidInputError, LeaderOnly, ScheduleHandler, ScheduleService, NotFoundError } from '../../lib';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

/** Two jobs on one semaphore, one on its own (their cron schedules never fire within a test). */
@Injectable()
class LedgerJobs {
  @Cron('0 30 2 * * *', { timeZone: 'Europe/Berlin' })
  @ClusterSingleton('ledger', '10s')
  async charge(): Promise<void> {}

  @Cron('0 45 2 * * *', { timeZone: 'Europe/Berlin' })
  @ClusterSingleton('ledger', '10s')
  async refund(): Promise<void> {}

  @Cron('0 0 3 * * *')
  @ClusterSingleton('sweep', '10s')
  async sweep(): Promise<void> {}
}

/** A runtime schedules' handler, and a leader-only method. */
@Injectable()
class TenantJobs {
  @ScheduleHandler('tenant-report')
  report(): void {}

  @LeaderOnly('pause-leader')
  async send(): Promise<void> {}
}

/**
 * `ScheduleService.pauseJob` and `resumeJob` on a real member: a `@ClusterSingleton` job is paused by its semaphore
 * (the other jobs on it named), resumed with the permits it had; a runtime schedule alone; an election's semaphore only
 * forced; an unknown job refused naming it, nothing changed.
 */
describe('pause and resume by job name (real member)', () => {
  let node: TestNode;
  let schedules: ScheduleService;
  beforeAll(async () => {
    node = await startNode({
      identity: { acquirer: 'pause-node', group: 'production' },
      mapPrefix: uniquePrefix('job-pause'),
      providers: [LedgerJobs, TenantJobs],
      definitions: [{ name: 'ledger', permits: 2, duration: '10s' }],
      elections: [{ name: 'pause-leader', lease: '2s' }],
    });
    schedules = node.get(ScheduleService);
  });
  afterAll(async () => {
    await node.close();
  });

  it("pauses a job's semaphore, names the job that shares it, and resumes it with the permits it had", async () => {
    const paused = await schedules.pauseJob('LedgerJobs.charge');
    expect(paused).toEqual({ job: 'LedgerJobs.charge', paused: true, by: 'semaphore', semaphore: 'ledger', permits: 0, alsoAffected: ['LedgerJobs.refund'] });
    expect(await node.semaphores.readDefinition('ledger')).toMatchObject({ permits: 0, pausedFrom: 2 });
    expect((await node.semaphores.readDefinition('sweep')).permits).toBe(1);
    // Both jobs on the semaphore show paused, with no next run; the other job runs on.
    await eventually('the pause in this node\'s view', () => node.semaphores.getDefinition('ledger')?.permits === 0);
    for (const job of ['LedgerJobs.charge', 'LedgerJobs.refund']) expect(await schedules.describe(job)).toMatchObject({ paused: true, nextRuns: [] });
    expect(await schedules.describe('LedgerJobs.sweep')).toMatchObject({ paused: false, nextRuns: expect.arrayContaining([expect.any(Number)]) });
    // Pausing again changes nothing: the remembered count stays.
    expect(await schedules.pauseJob('LedgerJobs.refund')).toMatchObject({ paused: true, permits: 0, alsoAffected: ['LedgerJobs.charge'] });
    expect((await node.semaphores.readDefinition('ledger')).pausedFrom).toBe(2);

    const resumed = await schedules.resumeJob('LedgerJobs.refund');
    expect(resumed).toEqual({ job: 'LedgerJobs.refund', paused: false, by: 'semaphore', semaphore: 'ledger', permits: 2, alsoAffected: ['LedgerJobs.charge'] });
    expect((await node.semaphores.readDefinition('ledger')).permits).toBe(2);
    await eventually('the resume in this node\'s view', () => node.semaphores.getDefinition('ledger')?.permits === 2);
    expect((await schedules.describe('LedgerJobs.charge')).nextRuns).toHaveLength(10);
  });

  it('names the runtime schedules on the same semaphore that it pauses too (not one paused on its own)', async () => {
    // Nobody has these handlers, so no node redefines the semaphore for them.
    await schedules.upsert({ id: 'ledger-export', cron: '0 0 4 * * *', handler: 'ledger-export', semaphore: 'ledger', duration: '10s', permits: 2 });
    await schedules.upsert({ id: 'ledger-archive', cron: '0 0 5 * * *', handler: 'ledger-archive', semaphore: 'ledger', duration: '10s', permits: 2, paused: true });
    try {
      const paused = await eventually('the schedules in this node\'s view', async () => {
        const result = await schedules.pauseJob('LedgerJobs.charge');
        return result.alsoAffected.includes('ledger-export') ? result : undefined;
      });
      expect(paused.alsoAffected).toEqual(['LedgerJobs.refund', 'ledger-export']);
      expect((await schedules.resumeJob('LedgerJobs.charge')).alsoAffected).toEqual(['LedgerJobs.refund', 'ledger-export']);
    } finally {
      await schedules.remove('ledger-export');
      await schedules.remove('ledger-archive');
    }
    expect((await node.semaphores.readDefinition('ledger')).permits).toBe(2);
  });

  it("pauses a runtime schedule's job alone, as pause(id) does, and resumes it", async () => {
    const created = await schedules.upsert({ id: 'report-acme', cron: '0 30 2 * * *', timeZone: 'Europe/Berlin', handler: 'tenant-report', duration: '10s' });
    await eventually('the schedule armed here', () => schedules.jobs().includes('report-acme'));
    await eventually('its semaphore defined', () => node.semaphores.getDefinition('schedule:report-acme')?.permits === 1);
    expect(await schedules.describe('report-acme')).toMatchObject({ paused: false, nextRuns: expect.arrayContaining([expect.any(Number)]) });

    const paused = await schedules.pauseJob('report-acme');
    expect(paused).toEqual({ job: 'report-acme', paused: true, by: 'schedule', semaphore: 'schedule:report-acme', revision: created.revision + 1, alsoAffected: [] });
    expect((await schedules.schedule('report-acme'))?.definition.paused).toBe(true);
    // Its semaphore is left as it was; describe says paused (the schedule is), with no next run.
    expect((await node.semaphores.readDefinition('schedule:report-acme')).permits).toBe(1);
    expect(await schedules.describe('report-acme')).toMatchObject({ paused: true, nextRuns: [] });
    // Run now is refused at once while it is paused, naming why.
    await eventually('this node to hear of the pause', () => schedules.runNow('report-acme', { timeout: '1s' }).then(() => false, (error: unknown) => (error as { reason?: string }).reason === 'PAUSED'));
    await expect(schedules.runNow('report-acme')).rejects.toThrow(/paused; resume it first/);

    const resumed = await schedules.resumeJob('report-acme');
    expect(resumed).toEqual({ job: 'report-acme', paused: false, by: 'schedule', semaphore: 'schedule:report-acme', revision: created.revision + 2, alsoAffected: [] });
    expect((await schedules.schedule('report-acme'))?.definition.paused).toBe(false);
    expect((await schedules.describe('report-acme')).nextRuns).toHaveLength(10);
    await schedules.remove('report-acme');
  });

  it('pauses a runtime schedule this node has no handler for (a job of the cluster, by its id)', async () => {
    await schedules.upsert({ id: 'elsewhere', cron: '0 0 6 * * *', handler: 'not-on-this-node', duration: '10s' });
    expect(schedules.jobs()).not.toContain('elsewhere');
    expect(await schedules.pauseJob('elsewhere')).toMatchObject({ job: 'elsewhere', paused: true, by: 'schedule' });
    expect((await schedules.schedule('elsewhere'))?.definition.paused).toBe(true);
    expect(await schedules.resumeJob('elsewhere')).toMatchObject({ paused: false, by: 'schedule' });
    await schedules.remove('elsewhere');
  });

  it("pauses a @LeaderOnly method's election only when forced", async () => {
    const job = 'leader:pause-leader:TenantJobs.send';
    await eventually('the election defined', () => node.semaphores.getDefinition('election:pause-leader')?.permits === 1);
    const refused = await schedules.pauseJob(job).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect(refused).toMatchObject({ kind: 'semaphore', id: 'election:pause-leader', field: 'permits' });
    expect((refused as Error).message).toContain('force');
    expect((await node.semaphores.readDefinition('election:pause-leader')).permits).toBe(1);

    expect(await schedules.pauseJob(job, { force: true })).toMatchObject({ job, paused: true, by: 'semaphore', semaphore: 'election:pause-leader', permits: 0, alsoAffected: [] });
    expect(await schedules.resumeJob(job, { force: true })).toMatchObject({ paused: false, permits: 1 });
  });

  it('refuses a job nobody has, naming it and the jobs here, and changes nothing', async () => {
    const before = node.semaphores.listDefinitions().map((d) => [d.name, d.permits]);
    for (const call of [() => schedules.pauseJob('LedgerJobs.nope'), () => schedules.resumeJob('LedgerJobs.nope')]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ kind: 'job', id: 'LedgerJobs.nope' });
      expect((error as Error).message).toContain('No job "LedgerJobs.nope"');
      expect((error as Error).message).toContain('LedgerJobs.charge, LedgerJobs.refund, LedgerJobs.sweep');
    }
    expect(node.semaphores.listDefinitions().map((d) => [d.name, d.permits])).toEqual(before);
  });
});
