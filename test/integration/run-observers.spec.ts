import { Injectable } from '@nestjs/common';
import { ClusterSingleton, ScheduleService, type ObservedRun, type RunObserver } from '../../lib';
import type { ObservedRunEnd } from '../../lib/schedules/run/run-observer';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

@Injectable()
class ObservedJobs {
  @ClusterSingleton('observed-charge', '30s')
  async charge(): Promise<void> {}

  @ClusterSingleton('observed-fail', '30s')
  async fail(): Promise<void> {
    throw new Error('the ledger is closed');
  }
}

/**
 * A user's run observer (`ScheduleService.observeRuns`) hears the start and the end of every run at one place: a tick,
 * a run now, a failure; an observer that throws breaks neither the run nor the observers after it. On a real PostgreSQL (the backend is not the point).
 */
describe('run observers: one seam around every run, open to users', () => {
  let node: TestNode;
  const heard: Array<{ run: ObservedRun; end?: ObservedRunEnd }> = [];
  beforeAll(async () => {
    node = await startNode({ backend: 'postgres', postgres: { mapPrefix: uniquePrefix('observers') }, identity: { acquirer: 'app-1', group: 'production' }, providers: [ObservedJobs] });
    const schedules = node.get(ScheduleService);
    schedules.observeRuns({ started: () => { throw new Error('a broken observer'); } });
    const observer: RunObserver = {
      started: (run) => heard.push({ run }),
      ended: (run, end) => {
        const entry = heard.find((h) => h.run === run);
        if (entry) entry.end = end;
      },
    };
    schedules.observeRuns(observer);
  });
  afterAll(async () => {
    await node?.close();
  });

  it('sees a tick start and end', async () => {
    await node.get(ObservedJobs).charge();
    expect(heard.at(-1)).toMatchObject({ run: { job: 'ObservedJobs.charge', semaphore: 'observed-charge', trigger: 'schedule' }, end: { outcome: 'completed' } });
  });

  it('sees a run now start and end, with its request', async () => {
    const result = await node.get(ScheduleService).runNow('ObservedJobs.charge', { timeout: '10s', wait: '10s' });
    expect(result.outcome).toBe('completed');
    const seen = await eventually('the run now to be observed ended', () => heard.find((h) => h.run.request === result.requestId && h.end));
    expect(seen).toMatchObject({ run: { job: 'ObservedJobs.charge', trigger: 'manual', token: result.token }, end: { outcome: 'completed' } });
  });

  it('sees a failure end as failed, with what the job threw, and the caller still gets the error', async () => {
    await expect(node.get(ObservedJobs).fail()).rejects.toThrow('the ledger is closed');
    expect(heard.at(-1)).toMatchObject({ run: { job: 'ObservedJobs.fail', trigger: 'schedule' }, end: { outcome: 'failed', error: expect.objectContaining({ message: 'the ledger is closed' }) } });
  });
});
