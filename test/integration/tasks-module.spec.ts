import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import {
  GatekeeperService, GroupFinishedHandler, InvalidInputError, InvalidTaskError, InvalidTaskHandler, OncePerTrigger, TaskHandler, TaskService,
  type GroupJoinData, type TaskContext, type TaskRecord,
} from '../../lib';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { uniquePrefix } from '../support/test-cluster';
import { eventually } from '../support/eventually';

/** What every node's handlers did, in order. */
const log: Array<{ node: string; what: string; detail?: unknown }> = [];

/** The seed's recon example, as a user writes it. */
@Injectable()
class Recon {
  constructor(
    private readonly tasks: TaskService,
    private readonly gatekeeper: GatekeeperService,
  ) {}

  private note(what: string, detail?: unknown): void {
    log.push({ node: this.gatekeeper.identity.acquirer, what, detail });
  }

  @TaskHandler('recon-parent', { lease: '10s' })
  async split(data: { system: string; batches: number }, task: TaskContext): Promise<string> {
    for (let i = 1; i <= data.batches; i++) {
      await task.submit({ type: 'recon-record-set', group: { name: data.system, number: i, ...(i === data.batches && { total: data.batches }) }, data: { batch: i } });
    }
    this.note('split');
    return `split into ${data.batches}`;
  }

  @TaskHandler('recon-record-set', { lease: '5s', maxAttempts: 2, backoff: { base: '10ms', max: '50ms' } })
  async reconcile(data: { batch: number }, task: TaskContext): Promise<number> {
    await task.renewLease();
    if (data.batch === 13) throw new InvalidTaskError('batch 13 has no records');
    this.note('batch', data.batch);
    return data.batch * 10;
  }

  @GroupFinishedHandler('recon-record-set')
  batchesDone(join: GroupJoinData): number {
    this.note('batches-joined', join);
    return Object.keys(join.results).length;
  }

  @GroupFinishedHandler('recon-parent')
  parentDone(join: GroupJoinData): void {
    this.note('parent-joined', join);
  }

  @InvalidTaskHandler()
  invalid(task: TaskRecord, error: string): void {
    this.note('invalid', `${task.id}: ${error}`);
  }

  @Cron('* * * * * *')
  @OncePerTrigger('every-second')
  async everySecond(task: TaskContext): Promise<void> {
    this.note('trigger', task.task.name);
  }
}

describe('tasks through the module, on a real member (TaskService, @TaskHandler, @OncePerTrigger)', () => {
  const nodes: TestNode[] = [];
  let prefix: string;
  beforeEach(() => {
    prefix = uniquePrefix('tasks');
    log.length = 0;
  });
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.close()));
  });

  async function node(acquirer: string, schedule = false): Promise<TestNode> {
    const started = await startNode({
      mapPrefix: prefix,
      identity: { acquirer },
      membership: false,
      maxClockSkew: '50ms',
      tasks: { scanInterval: '200ms' },
      providers: [Recon],
      schedule,
    });
    nodes.push(started);
    return started;
  }

  it('runs the recon example across three nodes: every batch once, the invalid one to its handler, one join, then the parent’s', async () => {
    const [a] = [await node('a'), await node('b'), await node('c')];
    const submitted = await a.get(TaskService).submit({ type: 'recon-parent', name: 'recon-system-x', data: { system: 'recon-system-x', batches: 30 } });
    expect(submitted.id).toBe('recon-parent:recon-system-x');
    await eventually('the parent’s join', () => log.some((e) => e.what === 'parent-joined'), { timeoutMs: 20_000 });
    const batches = log.filter((e) => e.what === 'batch').map((e) => e.detail as number);
    expect([...batches].sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1).filter((i) => i !== 13));
    expect(new Set(log.filter((e) => e.what === 'batch').map((e) => e.node)).size).toBeGreaterThan(1); // shared out
    expect(log.filter((e) => e.what === 'invalid').map((e) => e.detail)).toEqual(['recon-record-set:recon-system-x:13: batch 13 has no records']);
    const joins = log.filter((e) => e.what === 'batches-joined').map((e) => e.detail as GroupJoinData);
    expect(joins).toHaveLength(1);
    expect(Object.keys(joins[0].results)).toHaveLength(29);
    expect(joins[0].errors).toEqual({ 13: 'batch 13 has no records' });
    const parent = log.filter((e) => e.what === 'parent-joined');
    expect(parent).toHaveLength(1);
    expect((parent[0].detail as GroupJoinData).results).toEqual({ 'recon-record-set:recon-system-x': 29 });
    expect(log.findIndex((e) => e.what === 'parent-joined')).toBeGreaterThan(log.findIndex((e) => e.what === 'batches-joined'));
    const service = a.get(TaskService);
    expect((await service.counts())['recon-record-set']).toMatchObject({ done: 29, invalid: 1 });
    expect(await service.group('recon-record-set', 'recon-system-x')).toMatchObject({ total: 30, finished: 30, failed: 1 });
    // Submitting it again within the retention window is ignored: it is the same, finished task.
    expect((await service.submit({ type: 'recon-parent', name: 'recon-system-x', data: { system: 'recon-system-x', batches: 30 } })).state).toBe('done');
  });

  it('runs a @Cron @OncePerTrigger method once per trigger on three nodes, named by the scheduled instant', async () => {
    await Promise.all(['a', 'b', 'c'].map((n) => node(n, true)));
    await eventually('three triggers', () => log.filter((e) => e.what === 'trigger').length >= 3, { timeoutMs: 10_000 });
    await Promise.all(nodes.splice(0).map((n) => n.close()));
    const names = log.filter((e) => e.what === 'trigger').map((e) => e.detail as string);
    expect(new Set(names).size).toBe(names.length); // once each
    for (const name of names) expect(new Date(name).getUTCMilliseconds()).toBe(0); // the scheduled second, not the tick's moment
  });

  it('rejects bad task options and decorators with errors that name the field or the method', async () => {
    await expect(startNode({ mapPrefix: prefix, membership: false, tasks: { concurrency: 0 }, providers: [] })).rejects.toThrow(InvalidInputError);
    await expect(startNode({ mapPrefix: prefix, membership: false, tasks: { scanEvery: '1s' } as never, providers: [] })).rejects.toThrow(/tasks\.scanEvery/);
    expect(() => TaskHandler('x', { lease: 'soon' })).toThrow(/@TaskHandler\('x'\).*lease/);
    expect(() => TaskHandler('x', { lease: '30d' })).toThrow(/@TaskHandler\('x'\).*lease: must be at most 24 days/);
    expect(() => TaskHandler('a:b')).toThrow(/task type/);
    @Injectable()
    class NoCron {
      @OncePerTrigger('nightly')
      async nightly(): Promise<void> {}
    }
    await expect(startNode({ mapPrefix: prefix, membership: false, providers: [NoCron] })).rejects.toThrow(/NoCron\.nightly.*no @Cron/);
    @Injectable()
    class Twice {
      @TaskHandler('dup') one(): void {}
      @TaskHandler('dup') two(): void {}
    }
    await expect(startNode({ mapPrefix: prefix, membership: false, providers: [Twice] })).rejects.toThrow(/Twice\.two.*handled already, by .*Twice\.one/);
  });
});
