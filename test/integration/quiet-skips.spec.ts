import { Injectable } from '@nestjs/common';
import { ClusterSingleton, ScheduleService } from '../../lib';
import { eventually } from '../support/eventually';
import { MemoryBackend } from '../../lib/testing';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';

@Injectable()
class QuietJobs {
  @ClusterSingleton('quiet-report', '1m')
  async report(): Promise<void> {}
}

/** Two jobs on one semaphore (as the quickstart's and the fenced-writes page's once were): they share its permit. */
@Injectable()
class SharedJobs {
  release!: () => void;
  private begun!: () => void;
  readonly started = new Promise<void>((resolve) => (this.begun = resolve));

  @ClusterSingleton('shared-billing', '1m')
  async invoices(): Promise<void> {
    this.begun();
    await new Promise<void>((resolve) => (this.release = resolve));
  }

  @ClusterSingleton('shared-billing', '1m')
  async reminders(): Promise<void> {}
}

/**
 * A node that does not hold a job skips every tick of it: it says so once, at verbose, and again only when the reason
 * changes, not a line per tick per job (its history still counts every skipped tick).
 */
describe('skipped ticks in the logs', () => {
  const nodes: TestNode[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  it('one line per change of reason, not one per tick', async () => {
    const backend = new MemoryBackend();
    for (const acquirer of ['holder', 'other']) nodes.push(await startNode({ identity: { acquirer }, backend: 'memory', backends: { permits: backend }, membership: false, providers: [QuietJobs] }));
    const [holder, other] = nodes;
    await holder.get(QuietJobs).report();
    for (let tick = 0; tick < 10; tick++) await other.get(QuietJobs).report();
    const skips = other.logger.entries.filter((e) => e.message.startsWith('QuietJobs.report skipped'));
    expect(skips).toEqual([{ level: 'verbose', message: expect.stringContaining('skipped: NO_PERMIT_AVAILABLE') }]);
  });

  it('a tick skipped because another job here holds the permit it shares is said once, at the default level, naming that job', async () => {
    const node = await startNode({ identity: { acquirer: 'sharer' }, backend: 'memory', membership: false, providers: [SharedJobs], schedules: { history: { flushInterval: '200ms' } } });
    nodes.push(node);
    const jobs = node.get(SharedJobs);
    const running = jobs.invoices();
    await jobs.started;
    for (let tick = 0; tick < 3; tick++) await jobs.reminders();
    jobs.release();
    await running;
    const skips = node.logger.entries.filter((e) => e.message.startsWith('SharedJobs.reminders skipped'));
    expect(skips).toEqual([{
      level: 'warn',
      message: 'SharedJobs.reminders skipped: SharedJobs.invoices, in this process, uses the permit (IN_USE). Work that shares semaphore '
        + '"shared-billing" shares its permit, and while this node holds its only permit no node runs SharedJobs.reminders. Give '
        + 'SharedJobs.reminders a semaphore of its own. Said once; every tick skipped so is counted in the history and in '
        + 'job_ticks_skipped_total (reason IN_USE)',
    }]);
    await eventually('the skipped ticks counted', async () => (await node.get(ScheduleService).history('SharedJobs.reminders')).skipped.IN_USE === 3, { timeoutMs: 10_000, intervalMs: 100 });
  });
});
