import { writeFileSync } from 'node:fs';
import type { ClientConfig } from 'hazelcast-client';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/backends/hazelcast/tasks/hazelcast-task.store';
import { systemClock } from '../../lib/core/clock';
import { TaskWorker } from '../../lib/tasks/task-worker';
import type { TaskStore } from '../../lib/store/tasks/task-store';
import { PostgresBackend } from '../../lib/backends/postgres/postgres-backend';
import { PostgresTaskStore } from '../../lib/backends/postgres/tasks/postgres-task.store';
import { testPostgresUrl } from '../support/test-postgres';
import { testRedisUrl } from '../support/test-redis';
import { RedisBackend } from '../../lib/backends/redis/redis-backend';
import { RedisTaskStore } from '../../lib/backends/redis/tasks/redis-task.store';
import type { SubmitInput } from '../../lib';
import {
  checkHistory, newHistoryFile, readHistory, recordNemesis, runsOf, startTaskNode, useFaultCluster,
  type HistoryEvent, type NodeProcess, type StoreTarget, type TaskNodeSettings, type TaskNoteEvent,
} from '../harness';
import { eventually } from '../support/eventually';
import { testCluster, testClientConfig, uniquePrefix } from '../support/test-cluster';

/*
 * Leased distributed tasks (issue 12, seed 004) on the fault harness: real node processes (task-app.ts) run tasks
 * with handlers written as users write them; each run is a run in the history (token = the claim's epoch), and
 * what `TaskService.events` says (claimed, completed = the outcome the store accepted, rejected) is written beside
 * it. The nemesis kills, freezes and cuts them off; assertions read only the history.
 */
const LEASE_MS = 2_000;
const SCAN_MS = 500;
const SKEW_MS = 100;
/** Tasks each node of the shared-member suite runs at once. */
const CONCURRENCY = 4;
/** A dead worker's task runs again within its lease, the skew bound and one scan, plus the claim and a loaded machine's slack. */
const DETECTION_BOUND_MS = LEASE_MS + SKEW_MS + SCAN_MS + 500;

const print = (line: string) => process.stdout.write(`tasks: ${line}\n`);

const notes = (history: HistoryEvent[], kind?: TaskNoteEvent['kind'], id?: string): TaskNoteEvent[] =>
  history.filter((e): e is TaskNoteEvent => e.type === 'task' && (kind === undefined || e.kind === kind) && (id === undefined || e.id === id));
const starts = (history: HistoryEvent[], id: string) => history.filter((e) => e.type === 'start' && e.semaphore === `task/${id}`);

/** No two valid runs of a task at once, epochs growing per task, no run started past its lease (the checker). */
function expectSafe(history: HistoryEvent[]): ReturnType<typeof checkHistory> {
  const checked = checkHistory(history, { permits: 1 });
  expect(checked.violations).toEqual([]);
  return checked;
}

/** A submitting client of the test's own, through the library's submit path, on the nodes' store. */
async function submitter(target: ClientConfig | { postgresUrl: string } | { redisUrl: string }, mapPrefix: string): Promise<{ submit(input: SubmitInput): Promise<unknown>; state(id: string): Promise<string>; close(): Promise<void> }> {
  const store: TaskStore = 'postgresUrl' in target
    ? new PostgresTaskStore(new PostgresBackend({ connectionString: target.postgresUrl, mapPrefix }))
    : 'redisUrl' in target
      ? new RedisTaskStore(new RedisBackend({ url: target.redisUrl, mapPrefix }))
      : new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: target }), mapPrefix });
  await store.connect();
  const worker = new TaskWorker(store, { instance: 'test/1', acquirer: 'test' }, { clock: systemClock, clockSkewMs: SKEW_MS });
  return {
    submit: (input) => worker.submit(input),
    state: async (id) => {
      const task = (await store.read(id)).task;
      return task ? `${task.state}${task.claim ? ` (claim ${task.claim.acquirer} epoch ${task.claim.epoch})` : ''}, attempts ${task.attempts.map((a) => a.outcome ?? 'open').join('/')}` : 'absent';
    },
    close: () => store.close(),
  };
}

// The same scenes on the shared member and on the test run's PostgreSQL server (its native task store).
describe.each([
  { on: 'the shared member', target: (): StoreTarget => testCluster(), client: (): ClientConfig | { postgresUrl: string } | { redisUrl: string } => testClientConfig() },
  { on: 'PostgreSQL', target: (): StoreTarget => ({ postgresUrl: testPostgresUrl() }), client: () => ({ postgresUrl: testPostgresUrl() }) },
  { on: 'Redis', target: (): StoreTarget => ({ redisUrl: testRedisUrl() }), client: () => ({ redisUrl: testRedisUrl() }) },
])('tasks among real processes on $on', ({ on, target, client: clientTarget }) => {
  const nodes: NodeProcess[] = [];
  const historyFile = newHistoryFile({ PostgreSQL: 'tasks-pg', Redis: 'tasks-redis' }[on] ?? 'tasks');
  const mapPrefix = uniquePrefix('tasks');
  const common: Omit<TaskNodeSettings, 'name'> = { historyFile, cluster: target(), mapPrefix, leaseMs: LEASE_MS, scanMs: SCAN_MS, maxClockSkewMs: SKEW_MS, concurrency: CONCURRENCY };
  let client: Awaited<ReturnType<typeof submitter>>;
  const byPid = (pid: number) => nodes.find((n) => n.pid === pid)!;
  const print = (line: string) => process.stdout.write(`tasks on ${on}: ${line}\n`);

  beforeAll(async () => {
    // A new Redis prefix is declared so (else its first use counts as a loss); the other stores' are new by nature here.
    if (on === 'Redis') await new RedisBackend({ url: testRedisUrl(), mapPrefix }).declareFresh();
    client = await submitter(clientTarget(), mapPrefix);
    const once: SubmitInput = { type: 'work', name: 'database-check-2026-11-23T01:00', data: { ms: 100 } };
    nodes.push(...(await Promise.all(['node-a', 'node-b', 'node-c'].map((name) => startTaskNode({ ...common, name, ticks: true, submit: [once] })))));
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
    await client?.close();
  });

  it('one id submitted by three processes is one task and one run; a @Cron @OncePerTrigger on three nodes runs once per trigger', async () => {
    const id = 'work:database-check-2026-11-23T01:00';
    await eventually('its completion', () => notes(readHistory(historyFile), 'completed', id).length === 1, { timeoutMs: 20_000 });
    await eventually('three triggers done', () => new Set(notes(readHistory(historyFile), 'completed').filter((n) => n.id.startsWith('tick:')).map((n) => n.id)).size >= 3, { timeoutMs: 20_000 });
    const history = readHistory(historyFile);
    const submitted = notes(history, 'submitted', id);
    expect(submitted).toHaveLength(3);
    expect(new Set(submitted.map((n) => n.detail)).size).toBe(1); // all three got the one task back
    expect(starts(history, id)).toHaveLength(1);
    const tickIds = [...new Set(notes(history, 'completed').filter((n) => n.id.startsWith('tick:')).map((n) => n.id))];
    for (const tick of tickIds) {
      expect(notes(history, 'completed', tick)).toHaveLength(1);
      expect(starts(history, tick)).toHaveLength(1);
      expect(new Date(tick.slice('tick:'.length)).getUTCSeconds() % 2).toBe(0); // named by the scheduled instant
    }
    const ranOn = new Set(tickIds.map((tick) => starts(history, tick)[0].node));
    expectSafe(history);
    print(`one id submitted by 3 processes: 1 task (seq ${String(submitted[0].detail)}), 1 run; ${tickIds.length} cron triggers on 3 nodes: 1 run each (ran on ${[...ranOn].join(', ')})`);
  });

  it('SIGKILL of the node running a task: it runs again elsewhere within lease + scan, and completes once', async () => {
    const id = 'work:kill-me';
    await client.submit({ type: 'work', name: 'kill-me', data: { ms: 1_500 } });
    const first = await eventually('its start', () => starts(readHistory(historyFile), id)[0], { timeoutMs: 10_000 });
    const victim = byPid(first.pid);
    await victim.kill();
    const killedAt = readHistory(historyFile).filter((e) => e.type === 'nemesis' && e.action === 'kill').at(-1)!.at;
    const again = await eventually('a start elsewhere', () => starts(readHistory(historyFile), id).find((s) => s.pid !== victim.pid), { timeoutMs: 15_000 });
    await eventually('its completion', () => notes(readHistory(historyFile), 'completed', id).length > 0, { timeoutMs: 15_000 });
    const history = readHistory(historyFile);
    const detectedMs = again.at - killedAt;
    expect(detectedMs).toBeLessThanOrEqual(DETECTION_BOUND_MS);
    expect(again.at - first.at).toBeGreaterThanOrEqual(LEASE_MS - 100); // not before the lease could lapse
    expect(notes(history, 'completed', id)).toHaveLength(1);
    expectSafe(history);
    print(`SIGKILL during the handler: ran again on ${again.node} ${detectedMs} ms after the kill (bound ${DETECTION_BOUND_MS} = lease ${LEASE_MS} + skew + scan ${SCAN_MS} + 500)`);
  });

  it('SIGSTOP past the lease, then SIGCONT: its renewLease throws, its completion is refused, exactly one is accepted', async () => {
    const id = 'work:freeze-me';
    await client.submit({ type: 'work', name: 'freeze-me', data: { ms: 2_000 } });
    const first = await eventually('its start', () => starts(readHistory(historyFile), id)[0], { timeoutMs: 10_000 });
    const victim = byPid(first.pid);
    victim.freeze();
    await eventually('a start elsewhere', () => starts(readHistory(historyFile), id).find((s) => s.pid !== victim.pid), { timeoutMs: 15_000 });
    victim.resume();
    await eventually('the frozen run told', () => {
      const h = readHistory(historyFile);
      return h.some((e) => e.type === 'abort' && e.semaphore === `task/${id}` && e.pid === victim.pid) && notes(h, 'rejected', id).some((n) => n.pid === victim.pid);
    }, { timeoutMs: 15_000 });
    await eventually('its completion', () => notes(readHistory(historyFile), 'completed', id).length > 0, { timeoutMs: 15_000 });
    const history = readHistory(historyFile);
    const completed = notes(history, 'completed', id);
    expect(completed).toHaveLength(1);
    expect(completed[0].pid).not.toBe(victim.pid);
    // The frozen run made no effect after the resume.
    const resumedAt = history.filter((e) => e.type === 'nemesis' && e.action === 'resume').at(-1)!.at;
    expect(history.filter((e) => e.type === 'effect' && e.semaphore === `task/${id}` && e.pid === victim.pid && e.at > resumedAt)).toEqual([]);
    const checked = expectSafe(history);
    print(`SIGSTOP past the lease: another node took over, the resumed handler's renewLease threw and its outcome was refused; 1 accepted completion; ${checked.stats.runs} runs, 0 overlaps`);
  });

  it('the recon example with 100 sub-tasks across three processes, then failGroupFast', async () => {
    if (nodes.filter((n) => !n.exited()).length < 3) nodes.push(await startTaskNode({ ...common, name: 'node-d' }));
    await client.submit({ type: 'recon-parent', name: 'recon-system-x', data: { batches: 100 } });
    const parentJoin = 'recon-parent#group-finished:parent:recon-system-x';
    await eventually('the parent’s join', () => notes(readHistory(historyFile), 'completed', parentJoin).length > 0, { timeoutMs: 30_000 });
    let history = readHistory(historyFile);
    const subIds = Array.from({ length: 100 }, (_, i) => `recon-record-set:recon-system-x:${i + 1}`);
    expect(subIds.filter((sub) => notes(history, 'completed', sub).length !== 1)).toEqual([]); // each completed, once
    const subNodes = new Set(subIds.map((sub) => starts(history, sub)[0].node));
    expect(subNodes.size).toBeGreaterThan(1);
    const batchJoins = notes(history, 'joined', 'recon-record-set#group-finished:recon-system-x');
    expect(batchJoins).toHaveLength(1);
    expect(batchJoins[0].detail).toMatchObject({ results: 100, errors: {} });
    const parentJoins = notes(history, 'joined', parentJoin);
    expect(parentJoins).toHaveLength(1);
    expect(parentJoins[0].detail).toMatchObject({ results: { 'recon-record-set:recon-system-x': 100 } });
    expect(parentJoins[0].at).toBeGreaterThanOrEqual(batchJoins[0].at);

    // The batches that do not fail hold at a gate until the group's join has run: the stop is decided while every
    // slot is taken, so what ran is bounded by the slots, however slow the machine.
    const gate = `${historyFile}.gate`;
    await client.submit({ type: 'recon-parent', name: 'fast', data: { batches: 100, failAt: 1, failGroupFast: true, gate } });
    await eventually('the failed group’s join', () => notes(readHistory(historyFile), 'joined', 'recon-record-set#group-finished:fast').length > 0, { timeoutMs: 30_000 });
    writeFileSync(gate, '');
    await eventually('the failed group’s parent join', () => notes(readHistory(historyFile), 'completed', 'recon-parent#group-finished:parent:fast').length > 0, { timeoutMs: 30_000 });
    history = readHistory(historyFile);
    const fastJoins = notes(history, 'joined', 'recon-record-set#group-finished:fast');
    expect(fastJoins).toHaveLength(1);
    const fast = fastJoins[0].detail as { results: number; errors: Record<string, string>; failedFast: boolean };
    expect(fast.failedFast).toBe(true);
    expect(fast.errors['1']).toBe('batch 1 has no records');
    const ran = Array.from({ length: 100 }, (_, i) => `recon-record-set:fast:${i + 1}`).filter((sub) => starts(history, sub).length > 0);
    // The rest were stopped, cancelled where they waited or at their submit: at most every slot once, and batch 1's again.
    const slots = nodes.filter((n) => !n.exited()).length * CONCURRENCY;
    expect(ran.length).toBeLessThanOrEqual(slots + 1);
    expect(notes(history, 'invalid').filter((n) => n.id === 'recon-record-set:fast:1' && String(n.detail).startsWith('invalid handler'))).toHaveLength(1);
    expectSafe(history);
    print(`recon: 100 sub-tasks on ${subNodes.size} processes, each completed once; 1 join with 100 results, then 1 parent join; `
      + `failGroupFast: 1 invalid task stopped the group (${ran.length} of 100 ran, ${fast.results} had finished when it failed), 1 join with its error`);
  });

  afterAll(() => {
    const history = readHistory(historyFile);
    print(`history: ${runsOf(history).length} runs, ${notes(history, 'completed').length} accepted completions`);
  });
});

describe('tasks through a member freeze and connection resets (own member behind a proxy)', () => {
  const fault = useFaultCluster(1, { proxied: true });
  const historyFile = newHistoryFile('tasks-faults');

  it('completes every task exactly once: none lost, none completed twice', async () => {
    const { cluster, nodes } = fault;
    const mapPrefix = uniquePrefix('tasks-faults');
    const common = { historyFile, cluster: { clusterName: cluster.clusterName, addresses: cluster.addresses }, mapPrefix, leaseMs: LEASE_MS, scanMs: SCAN_MS, maxClockSkewMs: SKEW_MS };
    nodes.push(...(await Promise.all(['node-a', 'node-b', 'node-c'].map((name) => startTaskNode({ ...common, name, concurrency: 2 })))));
    const client = await submitter(cluster.clientConfig(), mapPrefix);
    try {
      const ids = Array.from({ length: 60 }, (_, i) => `job-${String(i).padStart(2, '0')}`);
      for (const name of ids) await client.submit({ type: 'work', name, data: { ms: 400 } });
      await eventually('some completed', () => notes(readHistory(historyFile), 'completed').length >= 5, { timeoutMs: 20_000 });

      recordNemesis(historyFile, 'freeze', 'member 0');
      await cluster.freeze(0);
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 800)); // longer than a lease: running claims lapse
      await cluster.resume(0);
      recordNemesis(historyFile, 'resume', 'member 0');
      for (let i = 0; i < 3; i++) {
        const target = nodes[i % nodes.length];
        const before = notes(readHistory(historyFile), 'completed').length;
        recordNemesis(historyFile, 'reset', target.name);
        cluster.proxy(0).reset({ pid: target.pid });
        await eventually('work going on after the reset', () => notes(readHistory(historyFile), 'completed').length > before, { timeoutMs: 15_000 });
      }
      const done = (h: HistoryEvent[]) => new Set(notes(h, 'completed').filter((n) => n.id.startsWith('work:job-')).map((n) => n.id));
      await eventually('all 60 completed', () => done(readHistory(historyFile)).size === 60, { timeoutMs: 60_000 }).catch(async (error: Error) => {
        const missing = ids.filter((name) => !done(readHistory(historyFile)).has(`work:${name}`));
        const states = await Promise.all(missing.map(async (name) => `work:${name}: ${await client.state(`work:${name}`)}`));
        throw new Error(`${error.message}; not completed: ${states.join('; ')}`);
      });
      const history = readHistory(historyFile);
      const twice = ids.filter((name) => notes(history, 'completed', `work:${name}`).length !== 1);
      expect(twice).toEqual([]);
      const checked = expectSafe(history);
      const rejected = notes(history, 'rejected').length;
      print(`member frozen ${LEASE_MS + 800} ms, then 3 connection resets: 60 tasks, each completed exactly once; ${checked.stats.runs} runs `
        + `(${checked.stats.runs - 60} re-runs after lapsed leases), ${rejected} outcomes refused by the fence, 0 overlaps`);
    } finally {
      await client.close();
    }
  });
});
