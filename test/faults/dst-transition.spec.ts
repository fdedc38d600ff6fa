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

  /**
   * Fixed-hour jobs at the instants where the cron package's timer fires wrongly (found by an operator's checks): one
   * real process per scene, its clock 35 s before the moment, with the job as a decorated `@Cron` and as a runtime
   * schedule (same expression and zone), and a runtime schedule every 5 s in UTC as the scene's clock (the scene is
   * over once that one ran 10 s past the moment).
   */
  it('runs a fixed-hour job once on both transition days, at the instant it names, decorated or runtime', async () => {
    const scenes = [
      // The first 01:30 of New York's fall-back runs, named by when it ran.
      { zone: 'America/New_York', cron: '0 30 1 * * *', moment: '2026-11-01T05:30:00Z', runs: true },
      // The second 01:30 does not (the timer fired it, and a runtime schedule armed inside the repeated hour found it).
      { zone: 'America/New_York', cron: '0 30 1 * * *', moment: '2026-11-01T06:30:00Z', runs: false },
      // Berlin's 03:30 job: the timer fires it at 02:30 CET too.
      { zone: 'Europe/Berlin', cron: '0 30 3 * * *', moment: '2026-10-25T01:30:00Z', runs: false },
      // Spring: the skipped 02:30 runs once, at 03:00 local, in both zones.
      { zone: 'Europe/Berlin', cron: '0 30 2 * * *', moment: '2026-03-29T01:00:00Z', runs: true },
      { zone: 'America/New_York', cron: '0 30 2 * * *', moment: '2026-03-08T07:00:00Z', runs: true },
    ];
    const outcomes = await Promise.all(scenes.map(async (scene, i) => {
      const historyFile = newHistoryFile(`dst-fixed-${i}`);
      const { clusterName, addresses } = testCluster();
      const moment = Date.parse(scene.moment);
      const env = {
        NODE_OPTIONS: `--require ${PRELOAD}`,
        CLOCK_SHIFT_MS: String(moment - LEAD_MS - Date.now()),
        RUNTIME_SCHEDULES: JSON.stringify([{ id: 'fixed', cron: scene.cron, timeZone: scene.zone }, { id: 'clock', cron: '*/5 * * * * *' }]),
      };
      const node = await startScheduleNode({
        name: `fixed-${i}`, historyFile, mapPrefix: uniquePrefix('dst-fixed'), cluster: { clusterName, addresses }, env,
        job: { semaphore: 'fixed', cron: scene.cron, timeZone: scene.zone, duration: '4s', runMs: 100 },
      });
      nodes.push(node);
      const starts = () => readHistory(historyFile).filter((e): e is Start => e.type === 'start');
      await eventually(`${scene.moment}: the scene's clock past the moment`, () => starts().some((e) => e.job === 'clock' && e.tick * 1000 >= moment + 10_000), { timeoutMs: 120_000, intervalMs: 200 });
      const fixed = starts().filter((e) => e.job !== 'clock').map((e) => ({ job: e.job, instant: new Date(e.tick * 1000).toISOString(), lateMs: e.at - e.tick * 1000 }));
      return { scene, fixed };
    }));
    for (const { scene, fixed } of outcomes) {
      const expected = scene.runs ? [{ job: 'fixed', instant: new Date(scene.moment).toISOString() }, { job: 'tick', instant: new Date(scene.moment).toISOString() }] : [];
      expect({ scene, runs: fixed.map(({ job, instant }) => ({ job, instant })).sort((a, b) => a.job.localeCompare(b.job)) }).toEqual({ scene, runs: expected });
      // The recorded instant is the one that ran: each run started within its lease (4 s) of it.
      for (const run of fixed) expect(run.lateMs).toBeLessThan(4_000);
      process.stdout.write(`DST fixed-hour ${scene.zone} ${scene.cron} at ${scene.moment}: ${fixed.length} runs (${fixed.map((r) => `${r.job} +${r.lateMs} ms`).join(', ') || 'none, as expected'})\n`);
    }
  });
});
