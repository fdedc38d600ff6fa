/*
 * Schedules at scale: 1,000 runtime schedules on 3 nodes (three Nest application contexts in this process, each
 * with its own Hazelcast client), each schedule firing every 10 s, so 100 fires a second in the cluster; then
 * "run now" latency, from the call on a node that does not hold the job to the run's start on the holder.
 */
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type { ClientConfig } from 'hazelcast-client';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClusterSingleton, GatekeeperModule, ScheduleHandler, ScheduleService } from '../lib';
import { GATEKEEPER_BACKENDS } from '../lib/nest/gatekeeper.constants';
import type { ModuleBackends } from '../lib/nest/gatekeeper-stores.factory';
import { percentile, round, type BenchRow } from './bench-stats';

const SCHEDULES = 1_000;
const WINDOW_MS = Number(process.env.BENCH_SCHEDULES_WINDOW_MS ?? 30_000);
const RUN_NOW_SAMPLES = 20;

/** Counts the fires of runtime schedules, and the starts of the run-now job. */
@Injectable()
class ScheduleBenchJobs {
  static fires = 0;
  static started = new Map<string, number>();

  constructor(private readonly schedules: ScheduleService) {}

  @ScheduleHandler('bench')
  fire(): void {
    ScheduleBenchJobs.fires++;
  }

  @ClusterSingleton('bench-run-now', '30s')
  async runNow(): Promise<void> {
    const run = this.schedules.currentRun();
    if (run?.request) ScheduleBenchJobs.started.set(run.request, performance.now());
  }
}

export async function schedulesBench(config: ClientConfig, mapPrefix: string, log: (line: string) => void): Promise<BenchRow[]> {
  const nodes: TestingModule[] = [];
  for (const name of ['s-0', 's-1', 's-2']) {
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ identity: { acquirer: name }, hazelcast: { clientConfig: config, mapPrefix } })],
      providers: [ScheduleBenchJobs],
    }).setLogger(false as never).compile();
    await app.init();
    nodes.push(app);
  }
  const rows: BenchRow[] = [];
  try {
    const service = nodes[0].get(ScheduleService);
    for (let i = 0; i < SCHEDULES; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => service.upsert({ id: `bench-${i + k}`, cron: `${(i + k) % 10}/10 * * * * *`, handler: 'bench', duration: '30s' })));
    }
    // Settle: every node armed every schedule and the first holders are chosen.
    await sleep(15_000);
    // Round trips, as the backends count them (every capability here is on each node's one Hazelcast backend).
    const roundTrips = () => nodes.reduce((sum, n) => sum + n.get<ModuleBackends>(GATEKEEPER_BACKENDS).of.schedules.operationCount(), 0);
    const tripsBefore = roundTrips();
    const firesBefore = ScheduleBenchJobs.fires;
    const cpuBefore = process.cpuUsage();
    await sleep(WINDOW_MS);
    const cpu = process.cpuUsage(cpuBefore);
    const fires = ScheduleBenchJobs.fires - firesBefore;
    const calls = roundTrips() - tripsBefore;
    const windowS = WINDOW_MS / 1000;
    const cpuMsPerNodePerS = (cpu.user + cpu.system) / 1000 / 3 / windowS;
    rows.push({
      scenario: 'schedules-steady', system: 'gatekeeper', nodes: 3, semaphores: SCHEDULES, runs: fires, p50Ms: null, p99Ms: null,
      opsPerSec: round(fires / windowS, 1), storeOpsPerTick: round(calls / fires, 3), roundTripsPerDecision: null, exactlyOncePct: null,
      cpuMsPerTickPerNode: round((cpu.user + cpu.system) / 1000 / fires / 3, 3),
      storeOpsPerSec: { total: round(calls / windowS, 1)!, permits: 0, presence: 0, perNode: round(calls / windowS / 3, 1)!, windowS },
    });
    log(`  ${SCHEDULES} runtime schedules on 3 nodes: ${round(fires / windowS, 1)} fires/s, ${round(calls / windowS, 1)} store calls/s (${round(calls / fires, 3)} per fire), CPU ${round(cpuMsPerNodePerS, 1)} ms/s per node (one process, total / 3)`);

    // Run now from a node that does not hold the job.
    await Promise.all(nodes.map((n) => n.get(ScheduleBenchJobs).runNow()));
    const samples: number[] = [];
    for (let i = 0; i < RUN_NOW_SAMPLES; i++) {
      const asker = nodes[i % 3].get(ScheduleService);
      const at = performance.now();
      const result = await asker.runNow('ScheduleBenchJobs.runNow');
      for (let k = 0; k < 200 && !ScheduleBenchJobs.started.has(result.requestId); k++) await sleep(1);
      samples.push((ScheduleBenchJobs.started.get(result.requestId) ?? performance.now()) - at);
    }
    rows.push({
      scenario: 'run-now', system: 'gatekeeper', nodes: 3, semaphores: 1, runs: RUN_NOW_SAMPLES, p50Ms: round(percentile(samples, 50), 1), p99Ms: round(percentile(samples, 99), 1),
      opsPerSec: null, storeOpsPerTick: null, roundTripsPerDecision: null, exactlyOncePct: null,
    });
    log(`  run now, call to the run's start on the holder: p50 ${round(percentile(samples, 50), 1)} ms, max ${round(Math.max(...samples), 1)} ms (${RUN_NOW_SAMPLES} calls from all 3 nodes)`);
  } finally {
    for (const app of nodes) await app.close();
  }
  return rows;
}
