import { join } from 'node:path';
import { newHistoryFile, readHistory, type NodeProcess, type StartEvent } from '../harness';
import { startScheduleNode } from '../harness/schedule-node';
import { eventually } from '../support/eventually';
import { testCluster, uniquePrefix } from '../support/test-cluster';

type Start = StartEvent & { trigger: string; instant?: number; at: number };
const PRELOAD = join(__dirname, '../harness/shift-clock.cjs');
const LEAD_MS = 35_000;

/**
 * Fixed-hour jobs at the instants where the cron package's timer fires wrongly (found by an operator's checks): one
 * real process per scene, its clock 35 s before the moment (a preload), with the job as a decorated `@Cron` and as a
 * runtime schedule (same expression and zone), and a runtime schedule every 5 s in UTC as the scene's clock.
 */
describe('fixed-hour jobs at daylight-saving transitions, lived through by real processes', () => {
  const nodes: NodeProcess[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.terminate()));
  });

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
