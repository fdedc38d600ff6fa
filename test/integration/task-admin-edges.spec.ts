import { Injectable } from '@nestjs/common';
import { GroupFinishedHandler, TaskHandler, TaskService, type GroupJoinData, type TaskContext } from '../../lib';
import { joinTaskId } from '../../lib/tasks/task-id.rules';
import { cli } from '../support/cli-process';
import { eventually } from '../support/eventually';
import { startTaskAdminApp, type TaskAdminApp } from '../support/task-admin-app';
import { testCluster, uniquePrefix } from '../support/test-cluster';

const TOKEN = 'task-edges-token-0123456789';
let release: () => void = () => undefined;

@Injectable()
class Jobs {
  @TaskHandler('export', { lease: '10s' })
  async export(_data: unknown, task: TaskContext): Promise<void> {
    await new Promise<void>((resolve) => {
      release = resolve;
      task.signal.addEventListener('abort', () => resolve());
    });
  }

  @TaskHandler('part')
  part(data: { n: number }): number {
    return data.n;
  }

  @GroupFinishedHandler('part')
  joined(join: GroupJoinData): number {
    return Object.keys(join.results).length;
  }
}

/**
 * The operators' task routes and commands at their edges: ids holding `#` and `/` travel encoded in the path, the
 * routes sit behind the admin guard, and malformed filters are a 400 (exit 2) naming the field, never a 500 and
 * never a purge wider than asked. (The main flows are in task-admin.spec.ts.)
 */
describe('task admin API and CLI: ids, guard and bad input (real member)', () => {
  const prefix = uniquePrefix('task-edges');
  const { clusterName, addresses } = testCluster();
  const env = { GATEKEEPER_HZ_MEMBERS: addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: clusterName };
  const run = (...args: string[]) => cli(['--map-prefix', prefix, ...args], env);
  const join = joinTaskId('part', 'batch-1'); // 'part#group-finished:batch-1'
  const slashed = 'export:reports/2026-11';
  let app: TaskAdminApp['app'];
  let tasks: TaskService;
  let call: TaskAdminApp['call'];

  const task = (id: string) => `/tasks/${encodeURIComponent(id)}`;

  beforeAll(async () => {
    ({ app, tasks, call } = await startTaskAdminApp({ mapPrefix: prefix, acquirer: 'edge-node', token: TOKEN, providers: [Jobs] }));
    await tasks.submit({ type: 'export', name: 'reports/2026-11' });
    for (let n = 1; n <= 2; n++) await tasks.submit({ type: 'part', group: { name: 'batch-1', number: n, ...(n === 2 && { total: 2 }) }, data: { n } });
    await eventually('the export to run and the join to finish', async () =>
      (await tasks.get(slashed))?.state === 'running' && (await tasks.get(join))?.state === 'done', { timeoutMs: 15_000 });
  });
  afterAll(async () => {
    release();
    await app?.close();
  });

  it('reaches ids holding # and / when they are encoded, in reads and in actions', async () => {
    const joined = await call('GET', task(join));
    expect([joined.status, joined.body.id, joined.body.type, joined.body.state]).toEqual([200, join, 'part#group-finished', 'done']);
    const refused = await call('POST', `${task(join)}/retry`); // the action found the task: a refusal, not a 404
    expect([refused.status, refused.body.task, refused.body.action]).toEqual([409, join, 'retry']);
    expect((await call('GET', task(slashed))).body).toMatchObject({ id: slashed, state: 'running', claim: { acquirer: 'edge-node' } });

    const shown = await run('tasks', 'show', join);
    expect([shown.code, shown.stdout]).toEqual([0, expect.stringContaining(`task ${join}: done`)]);
    const listed = await run('tasks', 'list', '--state', 'running');
    expect(listed.stdout).toMatch(/ID\s+STATE\s+PRIORITY\s+ATTEMPTS\s+HOLDER\s+AGE/);
    expect(listed.stdout).toMatch(/export:reports\/2026-11\s+running\s+0\s+1\s+edge-node \(epoch \d+\)/);

    const cancelled = await call('POST', `${task(slashed)}/cancel`);
    expect([cancelled.status, cancelled.body.state]).toEqual([200, 'cancelled']);
    expect((await tasks.get(slashed))!.attempts.at(-1)).toMatchObject({ outcome: 'cancelled', acquirer: 'edge-node' });
  });

  it('keeps every task route behind the admin token', async () => {
    for (const [method, path] of [['GET', '/tasks'], ['GET', '/tasks/list'], ['GET', task(join)], ['POST', '/tasks/purge']]) {
      expect([path, (await call(method, path, undefined, null)).status]).toEqual([path, 401]);
      expect([path, (await call(method, path, undefined, 'wrong-token-0123456789abc')).status]).toEqual([path, 403]);
    }
  });

  it('answers malformed filters with a 400 naming the field and purges nothing', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['GET', '/tasks/list?limit=0', undefined, 'limit'],
      ['GET', '/tasks/list?limit=ten', undefined, 'limit'],
      ['POST', '/tasks/purge', { olderThan: 'soon' }, 'olderThan'],
      ['POST', '/tasks/purge', { types: 5 }, 'type'],
      ['POST', '/tasks/purge', { states: ['done', 1] }, 'state'],
      ['POST', '/tasks/purge', { olderThanMs: 3_600_000 }, 'olderThanMs'], // a misspelt filter must not widen the purge
      ['POST', '/tasks/purge', [], 'body'],
    ];
    for (const [method, path, body, field] of cases) {
      const answer = await call(method, path, body);
      expect([path, body, answer.status, answer.body.field]).toEqual([path, body, 400, field]);
    }
    expect((await call('GET', '/tasks')).body.counts.part).toMatchObject({ done: 2 }); // nothing was purged

    const limit = await run('tasks', 'list', '--limit', '0');
    expect([limit.code, limit.stderr]).toEqual([2, expect.stringContaining('invalid --limit')]);
    const older = await run('tasks', 'purge', '--older-than', 'soon');
    expect([older.code, older.stderr]).toEqual([2, expect.stringContaining('invalid --older-than')]);
    expect((await call('POST', '/tasks/purge', { types: 'part', states: 'done' })).body).toEqual({ purged: 2 });
  });
});
