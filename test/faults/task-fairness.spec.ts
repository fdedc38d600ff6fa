import type { TaskNoteEvent } from '../harness';
import { newHistoryFile, readHistory, startTaskNode, type HistoryEvent, type NodeProcess } from '../harness';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/backends/hazelcast/tasks/hazelcast-task.store';
import { systemClock } from '../../lib/core/clock';
import { TaskWorker } from '../../lib/tasks/task-worker';
import { eventually } from '../support/eventually';
import { testCluster, testClientConfig, uniquePrefix } from '../support/test-cluster';

/*
 * A burst shared among three real processes (issue 24): every node hears of every task of a burst at once, so a node
 * that claimed whatever it saw, or lost every race to the fastest one and backed off, would leave the others idle.
 * Each hears the others' claims and, past an even share of the recent ones, waits while they claim (see ClaimTurns); no
 * node runs much more than its third. Each task still completes once.
 */
const BURST = 900;
/** The bench's target is 40 % for 3,000 tasks; a smaller burst on a loaded machine gets a little slack. */
const MAX_SHARE = 0.45;

const completions = (history: HistoryEvent[], prefix = 'work:burst-'): TaskNoteEvent[] => history.filter((e): e is TaskNoteEvent => e.type === 'task' && e.kind === 'completed' && e.id.startsWith(prefix));

/** Submits `count` no-op tasks named `<prefix><n>` through `store`, 16 at a time, as a burst. */
async function submitBurst(store: HazelcastTaskStore, prefix: string, count: number): Promise<void> {
  const submitter = new TaskWorker(store, { instance: 'test/1', acquirer: 'test' }, { clock: systemClock, clockSkewMs: 100 });
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < count) await submitter.submit({ type: 'work', name: `${prefix}${next++}`, data: { ms: 0 } });
  }));
}

describe('a burst of tasks on three real processes', () => {
  const nodes: NodeProcess[] = [];
  const historyFile = newHistoryFile('task-fairness');
  const mapPrefix = uniquePrefix('task-fairness');
  let store: HazelcastTaskStore;

  beforeAll(async () => {
    store = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix });
    await store.connect();
    // No-op handlers (`work` with no steps): the race for claims is all there is.
    nodes.push(...(await Promise.all(['node-a', 'node-b', 'node-c'].map((name) => startTaskNode({ historyFile, cluster: testCluster(), mapPrefix, name, leaseMs: 10_000, scanMs: 5_000 })))));
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
    await store?.close();
  });

  it(`shares ${BURST} tasks submitted at once: no node takes more than ${MAX_SHARE * 100} %, each task completes once`, async () => {
    await submitBurst(store, 'burst-', BURST);
    await eventually(`${BURST} completions`, () => new Set(completions(readHistory(historyFile)).map((c) => c.id)).size === BURST, { timeoutMs: 120_000 });
    const done = completions(readHistory(historyFile));
    expect(done).toHaveLength(BURST); // each once
    const shares = nodes.map((n) => done.filter((c) => c.node === n.name).length);
    process.stdout.write(`task fairness: ${BURST} tasks over three nodes: ${shares.join('/')}\n`);
    expect(Math.max(...shares)).toBeLessThanOrEqual(BURST * MAX_SHARE);
  });
});

/*
 * Nodes that hold back from fresh work must still take what the others leave: a node killed mid-burst stops claiming,
 * and the two left finish the burst (its claims in flight once their lease lapsed); then a node left alone runs a
 * burst by itself. Each task completes once.
 */
describe('a burst of tasks when a node dies mid-burst, then on a node left alone', () => {
  const nodes: NodeProcess[] = [];
  const historyFile = newHistoryFile('task-fairness-death');
  const mapPrefix = uniquePrefix('task-fairness-death');
  let store: HazelcastTaskStore;
  const LEASE_MS = 3_000;

  beforeAll(async () => {
    store = new HazelcastTaskStore({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix });
    await store.connect();
    nodes.push(...(await Promise.all(['node-a', 'node-b', 'node-c'].map((name) => startTaskNode({ historyFile, cluster: testCluster(), mapPrefix, name, leaseMs: LEASE_MS, scanMs: 1_000 })))));
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
    await store?.close();
  });

  const doneOnce = (prefix: string, count: number) => {
    const done = completions(readHistory(historyFile), prefix);
    const ids = new Set(done.map((c) => c.id));
    expect(ids.size).toBe(count); // every task
    expect(done).toHaveLength(count); // each once
    return done;
  };

  it(`the two nodes left finish a burst of ${BURST} when the third is killed in it, each task once`, async () => {
    const submitting = submitBurst(store, 'dies-', BURST);
    await eventually('a third of the burst done', () => completions(readHistory(historyFile), 'work:dies-').length >= BURST / 3, { timeoutMs: 60_000, intervalMs: 20 });
    await nodes[2].kill();
    await submitting;
    // Done in the store: the history may lack the completion of a task the killed node finished just before it died.
    const finished = async () => (await store.query({ types: ['work'] })).filter((t) => (t.name ?? '').startsWith('dies-') && t.state === 'done').length;
    await eventually(`${BURST} tasks done`, async () => (await finished()) === BURST, { timeoutMs: 90_000, intervalMs: 250 });
    const done = completions(readHistory(historyFile), 'work:dies-');
    expect(new Set(done.map((c) => c.id)).size).toBe(done.length); // none accepted twice
    const shares = nodes.map((n) => done.filter((c) => c.node === n.name).length);
    process.stdout.write(`task fairness, node-c killed: ${shares.join('/')}\n`);
    expect(shares[0] + shares[1]).toBeGreaterThan((2 * BURST) / 3); // the two left took the dead node's part too
  });

  it(`a node left alone runs a burst of ${BURST} by itself, each task once`, async () => {
    await nodes[1].terminate();
    await submitBurst(store, 'alone-', BURST);
    await eventually(`${BURST} completions`, () => new Set(completions(readHistory(historyFile), 'work:alone-').map((c) => c.id)).size === BURST, { timeoutMs: 120_000 });
    const done = doneOnce('work:alone-', BURST);
    expect(new Set(done.map((c) => c.node))).toEqual(new Set(['node-a']));
  });
});
