import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Test } from '@nestjs/testing';
import { startTracing } from '../../examples/tracing';
import { ClusterSingleton, GatekeeperModule, GatekeeperService, TaskHandler, TaskService, type GatekeeperModuleOptions } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

@Injectable()
class Jobs {
  fail = false;

  @ClusterSingleton('report', '5s')
  async report(): Promise<void> {
    if (this.fail) throw new Error('report broke');
  }

  @TaskHandler('export')
  export(): string {
    return 'ok';
  }
}

/**
 * OpenTelemetry spans through the guide's setup (docs/observability.md), on a real member: a decision, a job run (also one that fails)
 * and a task run each make one span with the semaphore, token and outcome; `tracing: false` makes none.
 */
describe('tracing (OpenTelemetry, real member)', () => {
  const exporter = new InMemorySpanExporter();
  let stopTracing: () => Promise<void>;
  const contexts: INestApplicationContext[] = [];
  beforeAll(() => {
    stopTracing = startTracing(exporter);
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
    exporter.reset();
  });
  afterAll(async () => {
    await stopTracing();
    trace.disable();
  });

  async function start(options: GatekeeperModuleOptions = {}): Promise<INestApplicationContext> {
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ hazelcast: { clientConfig: testClientConfig(), mapPrefix: uniquePrefix('tracing') }, membership: false, ...options })],
      providers: [Jobs],
    }).setLogger(new CapturingLogger()).compile();
    const context = moduleRef.createNestApplication({ logger: false });
    contexts.push(context);
    await context.init();
    return context;
  }
  const spans = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name);

  it('spans a decision, a job run and a task run, with the semaphore, token and outcome', async () => {
    const app = await start();
    const jobs = app.get(Jobs);
    await jobs.report();
    const acquired = spans('gatekeeper.acquire').find((s) => s.attributes['gatekeeper.semaphore'] === 'report')!;
    expect(acquired.attributes).toMatchObject({ 'gatekeeper.outcome': 'granted', 'gatekeeper.token': expect.any(Number) });
    const run = spans('gatekeeper.job')[0];
    expect(run.attributes).toEqual({ 'gatekeeper.semaphore': 'report', 'gatekeeper.job': 'Jobs.report', 'gatekeeper.token': acquired.attributes['gatekeeper.token'], 'gatekeeper.outcome': 'finished' });

    jobs.fail = true;
    await expect(jobs.report()).rejects.toThrow('report broke');
    const failed = spans('gatekeeper.job')[1];
    expect(failed.status).toMatchObject({ code: 2, message: 'report broke' }); // SpanStatusCode.ERROR
    expect(failed.events.map((e) => e.name)).toEqual(['exception']);

    const denied = await app.get(GatekeeperService).tryAcquire('unknown-semaphore');
    expect(denied.granted).toBe(false);
    expect(spans('gatekeeper.acquire').find((s) => s.attributes['gatekeeper.semaphore'] === 'unknown-semaphore')!.attributes)
      .toMatchObject({ 'gatekeeper.outcome': 'denied', 'gatekeeper.deny_reason': 'UNKNOWN_SEMAPHORE' });

    await app.get(TaskService).submit({ type: 'export', name: 'daily' });
    const task = await eventually('the task’s span', () => spans('gatekeeper.task')[0]);
    expect(task.attributes).toMatchObject({ 'gatekeeper.task': 'export:daily', 'gatekeeper.task_type': 'export', 'gatekeeper.attempt': 1, 'gatekeeper.token': expect.any(Number) });
  });

  it('makes no span with tracing: false', async () => {
    const app = await start({ tracing: false });
    await app.get(Jobs).report();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
