import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkHistory, readHistory, startWorkloadNode, type NodeProcess, type StartEvent } from '../harness';
import { eventually } from '../support/eventually';
import { testCluster, uniquePrefix } from '../support/test-cluster';

/**
 * Two processes configured with the same acquirer name (a copied config, a HOSTNAME fallback): ownership belongs
 * to each process's instance, so they never share a permit or a token, and the clash is reported.
 */
describe('two processes with one acquirer name', () => {
  const nodes: NodeProcess[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
  });

  it('never run a tick twice and never share a token, and the clash is logged', async () => {
    const historyFile = join(mkdtempSync(join(tmpdir(), 'gatekeeper-same-name-')), 'history.jsonl');
    const settings = {
      name: 'app', historyFile, cluster: testCluster(), mapPrefix: uniquePrefix('same-name'), maxClockSkew: '100ms',
      jobs: [{ semaphore: 'billing', duration: 1_000, intervalMs: 200, runMs: 20, effectEveryMs: 10 }],
    };
    nodes.push(...(await Promise.all([startWorkloadNode(settings), startWorkloadNode(settings)])));
    const starts = () => readHistory(historyFile).filter((e): e is StartEvent => e.type === 'start');
    await eventually('ten runs', () => starts().length >= 10, { timeoutMs: 15_000 });
    // Make the other process hold it for a while: stop the holder gracefully (it releases), let the other take it.
    const holder = nodes.find((n) => n.pid === starts().at(-1)!.pid)!;
    await holder.terminate();
    await eventually('the other process to run', () => starts().some((e) => e.pid !== holder.pid), { timeoutMs: 10_000 });
    const survivor = nodes.find((n) => n !== holder)!;
    await eventually('the clash to be reported', () => /Another running instance .* uses this node's acquirer name "app"/.test(holder.output() + survivor.output()), { timeoutMs: 10_000 });
    await Promise.all(nodes.map((n) => n.terminate()));

    const { violations, stats } = checkHistory(readHistory(historyFile), { permits: 1 });
    expect(violations).toEqual([]);
    const tokensByPid = new Map<number, Set<number>>();
    for (const e of starts()) tokensByPid.set(e.pid, (tokensByPid.get(e.pid) ?? new Set()).add(e.token));
    const [first, second] = [...tokensByPid.values()];
    expect([...first].filter((t) => second.has(t))).toEqual([]);
    process.stdout.write(`same acquirer name in two processes: ${stats.runs} runs, 0 ticks twice, 0 shared tokens, clash logged\n`);
  });
});
