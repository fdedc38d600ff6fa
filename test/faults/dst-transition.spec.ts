import { join } from 'node:path';
import { checkHistory, newHistoryFile, readHistory, type NodeProcess, type StartEvent } from '../harness';
import { startScheduleNode } from '../harness/schedule-node';
import { eventually } from '../support/eventually';
import { testCluster, uniquePrefix } from '../support/test-cluster';

type Start = StartEvent & { trigger: string; instant?: number; at: number };
const PRELOAD = join(__dirname, '../harness/shift-clock.cjs');
const LEAD_MS = 35_000;

/**
 * Real processes live through a daylight-saving transition: their wall clock is moved (a preload) to 35 s before
 * Berlin's spring-forward or autumn fall-back, and a `@Cron('*\/5 * * * * *', { timeZone: 'Europe/Berlin' })`
 * `@ClusterSingleton` job runs across it. In UTC every 5 s is a fire instant, shift or not: each must run exactly
 * once, none lost at the shift (an hour skipped) and none doubled (the repeated hour run twice).
 */
describe('a daylight-saving transition lived through by real processes', () => {
  const nodes: NodeProcess[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
  });

  async function across(transition: string) {
    const historyFile = newHistoryFile(`dst-${transition.slice(0, 10)}`);
    const { clusterName, addresses } = testCluster();
    // Long enough before the transition for the processes to boot (several at once on a small, loaded machine).
    const shift = Date.parse(transition) - LEAD_MS - Date.now();
    const mapPrefix = uniquePrefix('dst');
    const settings = (name: string) => ({
      name, historyFile, mapPrefix, cluster: { clusterName, addresses },
      job: { semaphore: 'dst', cron: '*/5 * * * * *', timeZone: 'Europe/Berlin', duration: '4s', runMs: 100, definitions: [{ name: 'dst', duration: '4s' }] },
    });
    const env = { NODE_OPTIONS: `--require ${PRELOAD}`, CLOCK_SHIFT_MS: String(shift) };
    const started = await Promise.all(['app-1', 'app-2'].map((name) => startScheduleNode({ ...settings(name), env })));
    nodes.push(...started);
    const end = Date.parse(transition) + 12_000;
    // Runs record the instant they are for (the processes' clock): wait for one past the transition's +12 s.
    await eventually('runs past the transition', () => readHistory(historyFile).some((e) => e.type === 'start' && (e as Start).tick * 1000 >= end), { timeoutMs: 90_000, intervalMs: 200 });
    const instants = readHistory(historyFile).filter((e): e is Start => e.type === 'start').map((e) => e.tick * 1000);
    expect(checkHistory(readHistory(historyFile), { permits: 1 }).violations).toEqual([]);
    return instants;
  }

  it("runs every 5 s instant once across Berlin's spring-forward and fall-back (both at once)", async () => {
    const transitions = ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z'];
    const results = await Promise.all(transitions.map((transition) => across(transition)));
    for (const [i, instants] of results.entries()) {
      const at = Date.parse(transitions[i]);
      // Around the shift (from 10 s before to 10 s after), every instant ran, each once.
      const around = instants.filter((t) => t >= at - 10_000 && t <= at + 10_000).sort((a, b) => a - b);
      expect(around).toEqual([at - 10_000, at - 5_000, at, at + 5_000, at + 10_000]);
      expect(new Set(instants).size).toBe(instants.length);
      process.stdout.write(`DST ${transitions[i]}: ${instants.length} runs, each instant once, none lost or doubled at the shift\n`);
    }
  });
});
