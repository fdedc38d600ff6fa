import { Injectable } from '@nestjs/common';
import { ClusterSingleton, RunNowRefusedError, ScheduleService } from '../../lib';
import { MemoryBackend } from '../../lib/testing';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';

/** Jobs "run now" cannot start at once: one that keeps its permit after it ran, and one whose data the store lost. */
@Injectable()
class LedgerJobs {
  runs = 0;

  @ClusterSingleton({ semaphore: 'refusal-ledger', duration: '1m', mode: 'release', lockAtLeastFor: '30s' })
  async exportLedger(): Promise<void> {
    this.runs++;
  }

  @ClusterSingleton('refusal-report', '20s')
  async report(): Promise<void> {
    this.runs++;
  }
}

/**
 * A "run now" that no node could start before its timeout used to wait it out and fail with NOT_STARTED, naming no
 * reason. Inside a lockAtLeastFor window or a recovery wait it is now refused at once, saying why and until when.
 */
describe('run now refused at once, naming why and until when', () => {
  let node: TestNode;
  const backend = new MemoryBackend();
  beforeAll(async () => {
    node = await startNode({ backend: 'memory', backends: { permits: backend }, membership: false, providers: [LedgerJobs] });
  });
  afterAll(async () => {
    await node?.close();
  });

  it('inside lockAtLeastFor: LOCKED, with the instant the permit is kept until', async () => {
    await node.get(LedgerJobs).exportLedger();
    const asked = performance.now();
    const refused = await node.get(ScheduleService).runNow('LedgerJobs.exportLedger', { timeout: '10s' }).catch((error: unknown) => error);
    const tookMs = performance.now() - asked;
    expect(refused).toBeInstanceOf(RunNowRefusedError);
    expect(refused).toMatchObject({ reason: 'LOCKED' });
    expect((refused as Error).message).toMatch(/keeps it until \d{4}-\d\d-\d\dT.*\(lockAtLeastFor\)/);
    // At once: not after the request's timeout (10 s).
    expect(tookMs).toBeLessThan(5_000);
  });

  it('during a recovery wait: RECOVERING, with the instant permits are granted again', async () => {
    const jobs = node.get(LedgerJobs);
    await jobs.report();
    backend.records.loseData();
    // The node finds the entry gone and rebuilds it with the recovery wait (the longest permit it knew, 20 s).
    await eventually('the report semaphore to be rebuilt', async () => {
      const result = await node.gatekeeper.tryAcquire('refusal-report');
      return !result.granted && result.reason === 'RECOVERING' ? result : undefined;
    }, { timeoutMs: 10_000 });
    const asked = performance.now();
    const refused = await node.get(ScheduleService).runNow('LedgerJobs.report', { timeout: '10s' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RunNowRefusedError);
    expect(refused).toMatchObject({ reason: 'RECOVERING' });
    expect((refused as Error).message).toMatch(/grants it again only after \d{4}-\d\d-\d\dT.*\(the recovery wait/);
    expect(performance.now() - asked).toBeLessThan(5_000);
  });
});
