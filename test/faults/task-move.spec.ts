import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/backends/hazelcast/tasks/hazelcast-task.store';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { PostgresTaskStore } from '../../lib/backends/postgres/tasks/postgres-task.store';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { RedisTaskStore } from '../../lib/backends/redis/tasks/redis-task.store';
import { systemClock } from '../../lib/core/clock';
import type { TaskStore } from '../../lib/store/tasks/task-store';
import { TaskWorker } from '../../lib/tasks/task-worker';
import { checkHistory, newHistoryFile, readHistory, recordNemesis, startTaskNode, type HistoryEvent, type TaskNoteEvent } from '../harness';
import { cli } from '../support/cli-process';
import { useMoveTest, type MoveKind } from '../support/move-test';
import { eventually } from '../support/eventually';
import { testClientConfig, testCluster, uniquePrefix } from '../support/test-cluster';

/** Long enough that the move (the CLI's start included) ends well inside the frozen node's lease. */
const LEASE_MS = 5_000;
const SKEW_MS = 100;
/** Tasks on the old store: more than node-a runs at once, each long enough to be running when node-a is frozen. */
const TASKS = 10;
const WORK_MS = 800;

type Kind = MoveKind;

const notes = (history: HistoryEvent[], kind: TaskNoteEvent['kind'], id?: string): TaskNoteEvent[] =>
  history.filter((e): e is TaskNoteEvent => e.type === 'task' && e.kind === kind && (id === undefined || e.id === id));
const startsOf = (history: HistoryEvent[], id: string) => history.filter((e) => e.type === 'start' && e.semaphore === `task/${id}`);

/*
 * Tasks moved from one store to another (PostgreSQL and Redis both ways, Hazelcast to PostgreSQL) under real processes with `nestjs-gatekeeper store move tasks --finish` (the
 * built CLI), the old node frozen (SIGSTOP) while it runs two of them: every task completes once, on the new store,
 * and the checker, reading only the history the processes wrote, finds no two valid runs of a task at once. The
 * control copies the tasks the way a hand-made migration would (onto the new store, left on the old one, claims
 * dropped) and must see tasks completed twice.
 */
describe.each([
  { from: 'postgres' as Kind, to: 'redis' as Kind },
  { from: 'redis' as Kind, to: 'postgres' as Kind },
  { from: 'hazelcast' as Kind, to: 'postgres' as Kind },
])('moving tasks from $from to $to (store move tasks --finish)', ({ from, to }) => {
  const { pgUrl, redisUrl, nodes, closing, env } = useMoveTest(from, to);

  /** A fresh prefix on both stores (Redis's declared new), a task store on each, and node starters. */
  async function scene(label: string) {
    const historyFile = newHistoryFile(`task-move-${label}`);
    const mapPrefix = uniquePrefix(`task-move-${label}`);
    if (!(await new RedisBackend({ url: redisUrl, mapPrefix }).declareFresh())) throw new Error(`prefix ${mapPrefix} was not new`);
    const storeOn = async (kind: Kind): Promise<TaskStore> => {
      const store = kind === 'postgres' ? new PostgresTaskStore(new PostgresBackend({ connectionString: pgUrl, mapPrefix }))
        : kind === 'redis' ? new RedisTaskStore(new RedisBackend({ url: redisUrl, mapPrefix }))
          : new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix });
      await store.connect();
      closing.push(() => store.close());
      return store;
    };
    const start = async (name: string, on: Kind) => {
      const node = await startTaskNode({ name, historyFile, mapPrefix, cluster: on === 'postgres' ? { postgresUrl: pgUrl } : on === 'redis' ? { redisUrl } : testCluster(), leaseMs: LEASE_MS, maxClockSkewMs: SKEW_MS, concurrency: 2, scanMs: 500 });
      nodes.push(node);
      return node;
    };
    const old = await storeOn(from);
    const worker = new TaskWorker(old, { instance: 'test/1', acquirer: 'test' }, { clock: systemClock, clockSkewMs: SKEW_MS });
    const ids: string[] = [];
    for (let i = 1; i <= TASKS; i++) ids.push((await worker.submit({ type: 'work', name: `m${i}`, data: { ms: WORK_MS } })).id);
    const submitOn = async (store: TaskStore, name: string) => (await new TaskWorker(store, { instance: 'test/2', acquirer: 'test' }, { clock: systemClock, clockSkewMs: SKEW_MS }).submit({ type: 'work', name, data: { ms: WORK_MS } })).id;
    return { historyFile, mapPrefix, old, newStore: () => storeOn(to), start, ids, submitOn };
  }

  it('the old node frozen mid-run: every task completes once on the new store, no two valid runs of a task at once', async () => {
    const { historyFile, mapPrefix, old, newStore, start, ids } = await scene(`${from}-${to}`);
    const nodeA = await start('node-a', from);
    await start('node-b', to);
    // node-a at work on two of them; the rest wait on the old store, which node-b does not see.
    const running = await eventually('node-a to run two tasks', () => {
      const h = readHistory(historyFile);
      const started = ids.filter((id) => startsOf(h, id).length > 0 && notes(h, 'completed', id).length === 0);
      return started.length >= 2 ? started : undefined;
    }, { timeoutMs: 30_000 });
    nodeA.freeze();
    recordNemesis(historyFile, 'store move tasks --finish');
    const moved = await cli(['--map-prefix', mapPrefix, '--connect-timeout', '10s', 'store', 'move', 'tasks', '--from', from, '--to', to, '--finish'], env);
    expect([moved.code, moved.stderr]).toEqual([0, '']);
    expect(moved.stdout).toContain(`Tasks: moved to ${to}`);
    expect(await old.query({})).toEqual([]);
    // An operator's task action aimed at the old store is refused: no live node works tasks there any more.
    const refused = await cli(['--map-prefix', mapPrefix, '--connect-timeout', '10s', '--backend', from, 'tasks', 'cancel', ids[ids.length - 1]], env);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining(`no live node uses this store for tasks: it moved to the ${to} store`)]);
    await eventually('every task completed', () => ids.every((id) => notes(readHistory(historyFile), 'completed', id).length > 0), { timeoutMs: 60_000 });
    // Thawed, node-a cannot renew or finish what it ran: the tasks left its store.
    nodeA.resume();
    await eventually('the thawed runs told', () => running.every((id) => readHistory(historyFile).some((e) => e.type === 'abort' && e.semaphore === `task/${id}` && e.node === 'node-a')
      || notes(readHistory(historyFile), 'rejected', id).some((n) => n.node === 'node-a')), { timeoutMs: 20_000 });
    await Promise.all(nodes.splice(0).map((n) => n.kill()));

    const history = readHistory(historyFile);
    const twice = ids.filter((id) => notes(history, 'completed', id).length !== 1);
    const { violations, stats } = checkHistory(history, { permits: 1 });
    const tasksThere = await (await newStore()).query({});
    process.stdout.write(`task move ${from} → ${to}: ${ids.length} tasks, node-a frozen running ${running.join(', ')}; `
      + `${stats.runs} runs, completions not once: ${twice.length}, violations ${violations.length}; on ${to}: ${tasksThere.filter((t) => t.state === 'done').length} done\n`);
    expect(twice).toEqual([]);
    expect(violations).toEqual([]);
    expect(tasksThere.map((t) => t.id).sort()).toEqual([...ids].sort());
    expect(tasksThere.every((t) => t.state === 'done')).toBe(true);
    // The interrupted ones ran again on node-b, and not before node-a's lease, as it last knew it, could have lapsed:
    // the frozen handler may act until then without asking anyone (the checker sees only what it wrote).
    for (const id of running) {
      const oldValidUntil = Math.max(...history.filter((e) => e.node === 'node-a' && (e.type === 'start' || e.type === 'effect') && e.semaphore === `task/${id}`).map((e) => ('validUntil' in e && e.validUntil) || 0));
      const newStart = startsOf(history, id).find((e) => e.node === 'node-b');
      expect(newStart).toBeDefined();
      expect(newStart!.at).toBeGreaterThanOrEqual(oldValidUntil);
    }
  }, 120_000);

  it('prepared, the new store claims nothing until finish; an id submitted on both stores runs once', async () => {
    const { historyFile, mapPrefix, old, newStore, start, ids, submitOn } = await scene(`hold-${from}-${to}`);
    const move = (...args: string[]) => cli(['--map-prefix', mapPrefix, '--connect-timeout', '10s', 'store', 'move', 'tasks', '--from', from, '--to', to, ...args], env);
    const nodeA = await start('node-a', from);
    const prepared = await move();
    expect([prepared.code, prepared.stderr]).toEqual([0, '']);
    await start('node-b', to);
    const target = await newStore();
    // A fixed id (as a trigger's) submitted on both stores, and a task of the new store's own.
    const both = await submitOn(old, 'both');
    await submitOn(target, 'both');
    const own = await submitOn(target, 'own');
    await eventually('node-a to finish the old store\'s tasks', () => [...ids, both].every((id) => notes(readHistory(historyFile), 'completed', id).length > 0), { timeoutMs: 60_000 });
    await nodeA.terminate();
    expect(readHistory(historyFile).filter((e) => e.type === 'start' && e.node === 'node-b')).toEqual([]);
    const finishing = recordNemesis(historyFile, 'store move tasks --finish');
    const finished = await move('--finish');
    expect([finished.code, finished.stderr]).toEqual([0, '']);
    await eventually('node-b to run the new store\'s own task', () => notes(readHistory(historyFile), 'completed', own).length > 0, { timeoutMs: 30_000 });
    const history = readHistory(historyFile);
    const firstB = Math.min(...history.filter((e) => e.type === 'start' && e.node === 'node-b').map((e) => e.at));
    process.stdout.write(`task move hold ${from} → ${to}: node-b's first start ${firstB - finishing.at} ms after finish began; '${both}' runs: ${startsOf(history, both).length}\n`);
    expect(firstB).toBeGreaterThanOrEqual(finishing.at);
    expect(startsOf(history, both).map((e) => e.node)).toEqual(['node-a']);
    expect((await target.read(both)).task?.state).toBe('done');
    expect(checkHistory(history, { permits: 1 }).violations).toEqual([]);
  }, 120_000);

  it('control: tasks copied by hand (left on the old store, claims dropped) are completed twice', async () => {
    const { historyFile, old, newStore, start, ids } = await scene(`control-${from}-${to}`);
    await start('node-a', from);
    await eventually('node-a to run a task', () => ids.some((id) => startsOf(readHistory(historyFile), id).length > 0), { timeoutMs: 30_000 });
    const target = await newStore();
    for (const task of await old.query({})) {
      await target.compareAndSet(task.id, { raw: null }, { ...task, state: task.state === 'running' ? 'pending' : task.state, claim: undefined });
    }
    await start('node-b', to);
    await eventually('every task completed', () => ids.every((id) => notes(readHistory(historyFile), 'completed', id).length > 0), { timeoutMs: 60_000 });
    await eventually('some completed twice', () => ids.some((id) => notes(readHistory(historyFile), 'completed', id).length > 1), { timeoutMs: 30_000 });
  }, 120_000);
});
