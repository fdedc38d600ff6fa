import { Injectable } from '@nestjs/common';
import { InvalidTaskError, TaskHandler, TaskService, type TaskContext } from '../../lib';
import { cli } from '../support/cli-process';
import { eventually } from '../support/eventually';
import { startTaskAdminApp, type TaskAdminApp } from '../support/task-admin-app';
import { testCluster, uniquePrefix } from '../support/test-cluster';

const TOKEN = 'task-admin-token-0123456789';
/** Whether `flaky` tasks succeed: they fail until the test lets them. */
let flakyHeals = false;
let release: () => void = () => undefined;

/** Handlers as users write them: a flaky one, an invalid one, one that waits, a small group. */
@Injectable()
class Jobs {
  @TaskHandler('flaky', { maxAttempts: 2, backoff: { base: '10ms', max: '20ms' } })
  flaky(): string {
    if (!flakyHeals) throw new Error('the ledger is locked');
    return 'reconciled';
  }

  @TaskHandler('bad')
  bad(): never {
    throw new InvalidTaskError('no such account');
  }

  @TaskHandler('slow', { lease: '10s' })
  async slow(_data: unknown, task: TaskContext): Promise<void> {
    await new Promise<void>((resolve) => {
      release = resolve;
      task.signal.addEventListener('abort', () => resolve());
    });
  }

  @TaskHandler('part')
  part(data: { n: number }): number {
    return data.n * 2;
  }
}

/**
 * The operators' view of distributed tasks: the admin API (`GET <prefix>/tasks`, `/tasks/list`, `/tasks/:id`,
 * `/tasks/groups/:type/:name`, `POST /tasks/:id/retry`, `/cancel`, `/tasks/purge`) and the CLI (`tasks ...`), both
 * reading and writing the cluster.
 */
describe('tasks for operators: admin API and CLI (real member)', () => {
  const prefix = uniquePrefix('task-admin');
  const { clusterName, addresses } = testCluster();
  const env = { GATEKEEPER_HZ_MEMBERS: addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: clusterName };
  const run = (...args: string[]) => cli(['--map-prefix', prefix, ...args], env);
  const json = async (...args: string[]) => {
    const result = await run('--json', ...args);
    expect([result.code, result.stderr]).toEqual([0, '']);
    return JSON.parse(result.stdout);
  };
  let app: TaskAdminApp['app'];
  let tasks: TaskService;
  let call: TaskAdminApp['call'];

  const state = async (id: string) => (await tasks.get(id))?.state;

  beforeAll(async () => {
    ({ app, tasks, call } = await startTaskAdminApp({ mapPrefix: prefix, acquirer: 'ops-node', token: TOKEN, providers: [Jobs] }));
    await tasks.submit({ type: 'flaky', name: 'ledger-1' });
    await tasks.submit({ type: 'bad', name: 'account-9' });
    await tasks.submit({ type: 'slow', name: 'export' });
    for (let n = 1; n <= 3; n++) await tasks.submit({ type: 'part', group: { name: 'g', number: n, ...(n === 3 && { total: 3 }) }, data: { n } });
    await eventually('all settled', async () => (await state('flaky:ledger-1')) === 'failed' && (await state('bad:account-9')) === 'invalid'
      && (await state('slow:export')) === 'running' && (await state('part:g:3')) === 'done', { timeoutMs: 15_000 });
  });
  afterAll(async () => {
    release();
    await app?.close();
  });

  it('counts by type and state, lists with filters, shows one task with its attempts and errors', async () => {
    const counts = await call('GET', '/tasks');
    expect(counts.status).toBe(200);
    expect(counts.body.counts).toMatchObject({ flaky: { failed: 1 }, bad: { invalid: 1 }, slow: { running: 1 }, part: { done: 3 } });
    const failed = await call('GET', '/tasks/list?state=failed,invalid');
    expect(failed.body.map((t: { id: string }) => t.id).sort()).toEqual(['bad:account-9', 'flaky:ledger-1']);
    expect((await call('GET', '/tasks/list?type=part&group=g&limit=2')).body).toHaveLength(2);
    const one = await call('GET', `/tasks/${encodeURIComponent('flaky:ledger-1')}`);
    expect(one.body.attempts.map((a: { outcome: string; error: string; acquirer: string }) => [a.outcome, a.error, a.acquirer]))
      .toEqual([['failed', 'the ledger is locked', 'ops-node'], ['failed', 'the ledger is locked', 'ops-node']]);
    const bad = await call('GET', '/tasks/list?state=finished');
    expect([bad.status, bad.body.field]).toEqual([400, 'state']);
    expect((await call('GET', `/tasks/${encodeURIComponent('flaky:nope')}`)).status).toBe(404);

    const table = await run('tasks');
    expect(table.stdout).toMatch(/TYPE\s+PENDING\s+RUNNING\s+DONE\s+FAILED\s+INVALID\s+CANCELLED/);
    expect(table.stdout).toMatch(/flaky\s+0\s+0\s+0\s+1\s+0\s+0/);
    expect((await json('tasks', 'list', '--state', 'running')).map((t: { id: string }) => t.id)).toEqual(['slow:export']);
    const shown = await run('tasks', 'show', 'flaky:ledger-1');
    expect(shown.stdout).toContain('task flaky:ledger-1: failed');
    expect(shown.stdout).toMatch(/1\s+ops-node\s+\d+\s+failed\s+\S+\s+the ledger is locked/);
    const usage = await run('tasks', 'list', '--state', 'stuck');
    expect([usage.code, usage.stderr]).toEqual([2, expect.stringContaining('invalid --state: "stuck" is not a task state')]);
  });

  it('retries a failed task (it then succeeds), refuses to retry a running one, and cancels', async () => {
    flakyHeals = true;
    const retried = await call('POST', `/tasks/${encodeURIComponent('flaky:ledger-1')}/retry`);
    expect([retried.status, retried.body.state]).toEqual([200, 'pending']);
    await eventually('the retry to succeed', async () => (await state('flaky:ledger-1')) === 'done');
    expect((await tasks.get('flaky:ledger-1'))!.result).toBe('reconciled');
    const refused = await call('POST', `/tasks/${encodeURIComponent('slow:export')}/retry`);
    expect([refused.status, refused.body.message]).toEqual([409, expect.stringContaining('it is running')]);
    const viaCli = await run('tasks', 'retry', 'slow:export');
    expect([viaCli.code, viaCli.stderr]).toEqual([1, expect.stringContaining('Cannot retry task slow:export')]);
    expect(await json('tasks', 'cancel', 'slow:export')).toMatchObject({ id: 'slow:export', state: 'cancelled' });
    expect((await call('POST', `/tasks/${encodeURIComponent('slow:export')}/cancel`)).status).toBe(409); // cancelled already
  });

  it('shows group progress and purges finished tasks, so their ids can run again', async () => {
    const group = await call('GET', '/tasks/groups/part/g');
    expect(group.body).toMatchObject({ id: 'part:g', total: 3, finished: 3, failed: 0, states: { done: 3 } });
    expect(group.body.joinSubmittedAt).toEqual(expect.any(Number));
    expect((await run('tasks', 'group', 'part', 'g')).stdout).toContain('group part:g: 3/3 ended, 0 failed');
    expect((await call('GET', '/tasks/groups/part/nope')).status).toBe(404);

    const badPurge = await call('POST', '/tasks/purge', { states: ['running'] });
    expect([badPurge.status, badPurge.body.field]).toEqual([400, 'state']);
    expect((await call('POST', '/tasks/purge', { types: ['bad'], states: ['invalid'] })).body).toEqual({ purged: 1 });
    expect(await tasks.get('bad:account-9')).toBeUndefined();
    expect(await json('tasks', 'purge', '--type', 'flaky', '--older-than', '0')).toEqual({ purged: 1 });
    expect((await tasks.submit({ type: 'flaky', name: 'ledger-1' })).state).toBe('pending'); // the id runs again
  });
});
