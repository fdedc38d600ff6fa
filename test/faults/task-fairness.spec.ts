import type { TaskNoteEvent } from '../harness';
import { newHistoryFile, readHistory, startTaskNode, type HistoryEvent, type NodeProcess } from '../harness';
import { HazelcastConnection } from '../../lib/hazelcast/hazelcast-connection';
import { HazelcastTaskStore } from '../../lib/tasks/hazelcast-task.store';
import { systemClock } from '../../lib/core/clock';
import { TaskWorker } from '../../lib/tasks/task-worker';
import { eventually } from '../support/eventually';
import { testCluster, testClientConfig, uniquePrefix } from '../support/test-cluster';

/*
 * A burst shared among three real processes (issue 24): every node hears of every task of a burst at once, so a node
 * that claimed whatever it saw, or lost every race to the fastest one and backed off, would leave the others idle.
 * Each claims in proportion to its free slots; no node runs much more than its third. Each task still completes once.
 */
const BURST = 900;
/** The bench's target is 40 % for 3,000 tasks; a smaller burst on a loaded machine gets a little slack. */
const MAX_SHARE = 0.45;

const completions = (history: HistoryEvent[]): TaskNoteEvent[] => history.filter((e): e is TaskNoteEvent => e.type === 'task' && e.kind === 'completed' && e.id.startsWith('work:burst-'));

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
    const submitter = new TaskWorker(store, { instance: 'test/1', acquirer: 'test' }, { clock: systemClock, clockSkewMs: 100 });
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < BURST) await submitter.submit({ type: 'work', name: `burst-${next++}`, data: { ms: 0 } });
    }));
    await eventually(`${BURST} completions`, () => new Set(completions(readHistory(historyFile)).map((c) => c.id)).size === BURST, { timeoutMs: 120_000 });
    const done = completions(readHistory(historyFile));
    expect(done).toHaveLength(BURST); // each once
    const shares = nodes.map((n) => done.filter((c) => c.node === n.name).length);
    process.stdout.write(`task fairness: ${BURST} tasks over three nodes: ${shares.join('/')}\n`);
    expect(Math.max(...shares)).toBeLessThanOrEqual(BURST * MAX_SHARE);
  });
});
