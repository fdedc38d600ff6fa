import { Injectable } from '@nestjs/common';
import { GatekeeperService, ScheduleHandler, ScheduleService, type ScheduleChangeResult } from '../../lib';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

interface TenantRun { id: string; node: string; tenant: string; version: number; instant: number | undefined }

/** The handler runtime schedules name; every run is recorded in the shared list. */
@Injectable()
class TenantJobs {
  static runs: TenantRun[] = [];

  constructor(private readonly gatekeeper: GatekeeperService, private readonly schedules: ScheduleService) {}

  @ScheduleHandler('tenant-report')
  report(data: { tenant: string; version: number }): void {
    const run = this.schedules.currentRun()!;
    TenantJobs.runs.push({ id: run.job, node: this.gatekeeper.identity.acquirer, tenant: data.tenant, version: data.version, instant: run.instant });
  }
}

/** Runs of each (schedule, instant): more than one would be a tick run twice. */
function doubled(runs: TenantRun[]): string[] {
  const seen = new Map<string, number>();
  for (const r of runs) seen.set(`${r.id}@${r.instant}`, (seen.get(`${r.id}@${r.instant}`) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([key]) => key);
}

describe('schedules defined at runtime, on a real member', () => {
  let nodes: TestNode[];
  let mapPrefix: string;
  beforeEach(() => {
    nodes = [];
    mapPrefix = uniquePrefix('runtime');
    TenantJobs.runs = [];
  });
  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });
  async function node(acquirer: string): Promise<TestNode> {
    const started = await startNode({ identity: { acquirer, group: 'production' }, mapPrefix, providers: [TenantJobs], schedules: { history: { flushInterval: '200ms' } } });
    nodes.push(started);
    return started;
  }

  it('runs a schedule registered while the app runs once per instant, follows its edits within a tick, and stops at pause and remove', async () => {
    const [a, b] = [await node('node-a'), await node('node-b')];
    const created = await a.get(ScheduleService).upsert({ id: 'report-acme', cron: '* * * * * *', handler: 'tenant-report', data: { tenant: 'acme', version: 1 }, duration: '3s' });
    expect(created).toMatchObject({ id: 'report-acme', outcome: 'created' });
    // The same definition from the other replica writes nothing.
    const again = await b.get(ScheduleService).upsert({ id: 'report-acme', cron: '* * * * * *', handler: 'tenant-report', data: { tenant: 'acme', version: 1 }, duration: '3s' });
    expect(again).toMatchObject({ outcome: 'unchanged', revision: created.revision });
    await eventually('three runs', () => TenantJobs.runs.length >= 3, { timeoutMs: 10_000 });
    expect(TenantJobs.runs[0]).toMatchObject({ id: 'report-acme', tenant: 'acme', version: 1 });
    for (const run of TenantJobs.runs) expect(run.instant! % 1000).toBe(0);

    const edited = await b.get(ScheduleService).upsert({ id: 'report-acme', cron: '* * * * * *', handler: 'tenant-report', data: { tenant: 'acme', version: 2 }, duration: '3s' });
    expect(edited).toMatchObject({ outcome: 'updated', revision: created.revision + 1 });
    const editedAt = Date.now();
    await eventually('the edit running', () => TenantJobs.runs.some((r) => r.version === 2), { timeoutMs: 5_000 });
    // Within a tick (1 s) plus the view's bound (1 s) of the edit.
    expect(TenantJobs.runs.find((r) => r.version === 2)!.instant! - editedAt).toBeLessThan(2_500);

    await a.get(ScheduleService).pause('report-acme');
    const pausedAt = Date.now();
    // Nothing fires after the pause reached every node: within a tick plus the view's bound (2 s); watched for 3 s.
    await eventually('three seconds of pause', () => Date.now() >= pausedAt + 3_000, { timeoutMs: 5_000, intervalMs: 100 });
    expect(TenantJobs.runs.filter((r) => r.instant! > pausedAt + 2_000)).toEqual([]);
    const history = await eventually('runs in the history', async () => {
      const h = await a.get(ScheduleService).history('report-acme');
      return h.runs.length >= 3 ? h : undefined;
    });
    expect(history.runs.every((r) => r.trigger === 'schedule' && r.outcome === 'completed')).toBe(true);

    await b.get(ScheduleService).remove('report-acme');
    await eventually('removed everywhere', () => [a, b].every((n) => !n.get(ScheduleService).jobs().includes('report-acme')), { timeoutMs: 5_000 });
    expect(await a.get(ScheduleService).schedules()).toEqual([]);
    expect(doubled(TenantJobs.runs)).toEqual([]);
  });

  it('loses and doubles nothing when two replicas upsert the same 20 schedules at once with different versions', async () => {
    const [a, b] = [await node('node-a'), await node('node-b')];
    const ids = Array.from({ length: 20 }, (_, i) => `tenant-${i}`);
    const results: ScheduleChangeResult[] = [];
    const version = new Map<string, number>(); // by `${id}@${revision}`: the version that write carried
    const upsertAll = (n: TestNode, v: number) => Promise.all(ids.map(async (id) => {
      const result = await n.get(ScheduleService).upsert({ id, cron: '* * * * * *', handler: 'tenant-report', data: { tenant: id, version: v }, duration: '3s' });
      results.push(result);
      if (result.outcome !== 'unchanged') version.set(`${id}@${result.revision}`, v);
    }));
    for (let round = 0; round < 3; round++) await Promise.all([upsertAll(a, round * 2 + 1), upsertAll(b, round * 2 + 2)]);

    const stored = await a.get(ScheduleService).schedules();
    expect(stored.map((s) => s.id).sort()).toEqual([...ids].sort());
    for (const schedule of stored) {
      // The last write wins by revision: what is stored is what the write with the highest revision carried.
      const writes = results.filter((r) => r.id === schedule.id && r.outcome !== 'unchanged');
      const newest = Math.max(...writes.map((r) => r.revision));
      expect(schedule.revision).toBe(newest);
      expect((schedule.definition.data as { version: number }).version).toBe(version.get(`${schedule.id}@${newest}`));
      // Every effective write moved the revision by one: none lost.
      expect(new Set(writes.map((r) => r.revision)).size).toBe(writes.length);
    }
    const from = Date.now() + 1_500;
    await eventually('every schedule to fire for two instants', () => ids.every((id) => TenantJobs.runs.filter((r) => r.id === id && r.instant! >= from).length >= 2), { timeoutMs: 15_000 });
    expect(doubled(TenantJobs.runs)).toEqual([]);
  });
});
