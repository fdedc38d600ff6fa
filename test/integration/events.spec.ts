import { Injectable, type OnModuleInit } from '@nestjs/common';
import { EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test, type TestingModule } from '@nestjs/testing';
import type { Subscription } from 'rxjs';
import {
  AllocationService, ClusterSingleton, GatekeeperModule, GatekeeperService, GroupFinishedHandler, TaskHandler, TaskService, type GatekeeperEvent,
} from '../../lib';
import { GatekeeperEvents } from '../../lib/nest/signals/gatekeeper-events';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';

/** What `@OnEvent` listeners heard, by name. */
const heard: GatekeeperEvent[] = [];
let failNext = false;

@Injectable()
class Listeners {
  @OnEvent('gatekeeper.job.started')
  @OnEvent('gatekeeper.job.finished')
  @OnEvent('gatekeeper.job.failed')
  @OnEvent('gatekeeper.permit.granted')
  @OnEvent('gatekeeper.permit.refreshed')
  @OnEvent('gatekeeper.leader.elected')
  @OnEvent('gatekeeper.resource.assigned')
  @OnEvent('gatekeeper.task.claimed')
  @OnEvent('gatekeeper.task.completed')
  @OnEvent('gatekeeper.task.group-finished')
  on(event: GatekeeperEvent): void {
    heard.push(event);
  }
}

/** A job, a task handler and an allocation, as users write them. */
@Injectable()
class Work implements OnModuleInit {
  constructor(private readonly allocations: AllocationService) {}

  onModuleInit(): void {
    this.allocations.participate('queues', { resources: () => ['q-1', 'q-2'] });
  }

  @ClusterSingleton('billing', '5s')
  async billing(): Promise<void> {
    if (failNext) {
      failNext = false;
      throw new Error('the ledger is locked');
    }
  }

  @TaskHandler('part')
  part(data: number): number {
    return data;
  }

  @GroupFinishedHandler('part')
  joined(): void {}
}

describe('lifecycle events: an rxjs stream always, @nestjs/event-emitter when the app has it', () => {
  const apps: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    heard.length = 0;
  });

  async function start(withEmitter: boolean): Promise<TestingModule> {
    const app = await Test.createTestingModule({
      imports: [
        ...(withEmitter ? [EventEmitterModule.forRoot()] : []),
        GatekeeperModule.forRoot({
          backend: 'memory', membership: false, identity: { acquirer: 'node-a' }, elections: ['leader'],
          allocations: [{ name: 'queues', lease: '2s', rebalanceDelay: '100ms' }], tasks: { scanInterval: '200ms' },
        }),
      ],
      providers: [Work, ...(withEmitter ? [Listeners] : [])],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    apps.push(app);
    return app;
  }

  it('emits jobs, permits, leaders, resources and tasks to @OnEvent listeners and the stream, stamped with the node', async () => {
    const app = await start(true);
    const streamed: GatekeeperEvent[] = [];
    const subscription: Subscription = app.get(GatekeeperService).events.subscribe((event) => streamed.push(event));
    try {
      const work = app.get(Work);
      await work.billing();
      await work.billing();
      failNext = true;
      await expect(work.billing()).rejects.toThrow('the ledger is locked');
      for (let n = 1; n <= 2; n++) await app.get(TaskService).submit({ type: 'part', group: { name: 'g', number: n, ...(n === 2 && { total: 2 }) }, data: n });
      await eventually('the leader, the resources and the group', () => ['gatekeeper.leader.elected', 'gatekeeper.resource.assigned', 'gatekeeper.task.group-finished']
        .every((name) => heard.some((e) => e.name === name)), { timeoutMs: 10_000 })
        .catch((error: Error) => {
          throw new Error(`${error.message}; heard ${heard.map((e) => e.name).join(', ')}; streamed ${streamed.map((e) => e.name).join(', ')}`);
        });
      const names = (list: GatekeeperEvent[], prefix: string) => list.filter((e) => e.name.startsWith(prefix)).map((e) => e.name);
      expect(names(heard, 'gatekeeper.job')).toEqual([
        'gatekeeper.job.started', 'gatekeeper.job.finished', 'gatekeeper.job.started', 'gatekeeper.job.finished', 'gatekeeper.job.started', 'gatekeeper.job.failed',
      ]);
      expect(streamed.find((e) => e.name === 'gatekeeper.job.failed')).toMatchObject({ job: 'Work.billing', semaphore: 'billing', error: 'the ledger is locked', node: 'node-a' });
      expect(names(heard, 'gatekeeper.permit')).toEqual(['gatekeeper.permit.granted', 'gatekeeper.permit.refreshed', 'gatekeeper.permit.refreshed']);
      expect(heard.find((e) => e.name === 'gatekeeper.resource.assigned')).toMatchObject({ allocation: 'queues', resources: ['q-1', 'q-2'] });
      expect(heard.find((e) => e.name === 'gatekeeper.leader.elected')).toMatchObject({ election: 'leader', epoch: expect.any(Number) });
      expect(heard.filter((e) => e.name === 'gatekeeper.task.completed').map((e) => (e as { task: string }).task).sort())
        .toEqual(['part#group-finished:g', 'part:g:1', 'part:g:2']);
      expect(heard.filter((e) => e.name === 'gatekeeper.task.group-finished')).toEqual([expect.objectContaining({ type: 'part', group: 'g' })]);
      // The stream saw everything the listeners did, in the same order.
      expect(streamed.filter((e) => heard.includes(e))).toEqual(heard.filter((e) => streamed.includes(e)));
      expect(streamed.every((e) => e.node === 'node-a' && typeof e.at === 'number')).toBe(true);
    } finally {
      subscription.unsubscribe();
    }
  });

  it('builds no task event while nobody listens, and a subscriber that comes later hears every one from then on', async () => {
    const app = await start(false);
    await new Promise((resolve) => setImmediate(resolve)); // the start-up's events are handed over: no buffer listens any more
    const published = jest.spyOn(app.get(GatekeeperEvents, { strict: false }), 'emit');
    const tasks = app.get(TaskService);
    await tasks.submit({ type: 'part', name: 'unheard', data: 1 });
    await eventually('the unheard task done', async () => (await tasks.get('part:unheard'))?.state === 'done');
    expect(published.mock.calls.map(([event]) => event.name).filter((name) => name.startsWith('gatekeeper.task'))).toEqual([]);
    const streamed: string[] = [];
    const told: string[] = [];
    const subscriptions = [
      app.get(GatekeeperService).events.subscribe((event) => streamed.push(`${event.name} ${'task' in event ? event.task : ''}`)),
      tasks.events.subscribe((event) => told.push(`${event.kind} ${'task' in event ? event.task.id : event.id}`)),
    ];
    try {
      await tasks.submit({ type: 'part', name: 'heard', data: 2 });
      await eventually('the heard task reported', () => told.includes('completed part:heard') && streamed.includes('gatekeeper.task.completed part:heard'));
      expect(told).toEqual(['claimed part:heard', 'completed part:heard']);
      expect(streamed.filter((e) => e.startsWith('gatekeeper.task'))).toEqual(['gatekeeper.task.claimed part:heard', 'gatekeeper.task.completed part:heard']);
    } finally {
      for (const subscription of subscriptions) subscription.unsubscribe();
    }
  });

  it('works without @nestjs/event-emitter in the app: the stream alone', async () => {
    const app = await start(false);
    const streamed: string[] = [];
    const subscription = app.get(GatekeeperService).events.subscribe((event) => streamed.push(event.name));
    await app.get(Work).billing();
    expect(streamed).toEqual(['gatekeeper.permit.granted', 'gatekeeper.job.started', 'gatekeeper.job.finished']);
    subscription.unsubscribe();
  });
});
