/*
 * A workload node, run as a real process by fault tests: a Nest application context whose jobs come
 * from env WORKLOAD. Each job is a provider method under the real @ClusterSingleton, called by a schedule, so
 * every tick takes the decorator's normal path (local decision, keep-alive, release) as a production tick does.
 * Each run appends start / effect / abort / signal / end events to HISTORY_FILE (see history.ts).
 */
import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Module, type OnApplicationBootstrap, type OnModuleDestroy, type Type } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { ClusterSingleton, GatekeeperModule, GatekeeperService, type ClusterSingletonOptions, type DurationInput } from '../../lib';
import { bootFixture, env, gatekeeperOptionsFromEnv } from '../fixtures/fixture-process';
import { appendEvent, type RunEvent, type Unstamped } from './history';
import type { WorkloadJob } from './workload';

const historyFile = env('HISTORY_FILE');
const nodeName = env('NODE_NAME');
const offsetMs = Number(process.env.CLOCK_OFFSET_MS ?? 0);
const record = (event: Unstamped<RunEvent>) => appendEvent(historyFile, event, nodeName);
const durationFromEnv = (v: string): DurationInput => (/^\d+$/.test(v) ? Number(v) : v);

/** A provider class of its own per job, so each gets its own decorated method, name and schedule. */
function jobProvider(job: WorkloadJob, index: number): Type {
  const name = job.name ?? job.semaphore;

  @Injectable()
  class WorkloadJobRunner implements OnApplicationBootstrap, OnModuleDestroy {
    private stopped = false;

    constructor(
      @Inject(GatekeeperService) private readonly gatekeeper: GatekeeperService,
      @Inject(SchedulerRegistry) private readonly schedules: SchedulerRegistry,
    ) {}

    /** The job body; `firedAt` is when its tick fired (real time), which numbers the tick. */
    async run(firedAt: number): Promise<void> {
      const lease = this.gatekeeper.currentLease();
      if (!lease) throw new Error(`${name}: no lease inside a @ClusterSingleton run`);
      const base = { semaphore: job.semaphore, job: name, token: lease.permit.fencingToken };
      record({
        ...base, type: 'start', tick: Math.floor(firedAt / job.intervalMs), firedAt, periodMs: job.intervalMs, validUntil: lease.validUntil - offsetMs, valid: lease.isValid(),
        grantedAt: lease.permit.grantedAt - offsetMs,
      });
      const onSignal = () => record({ ...base, type: 'signal', reason: reasonOf(lease.signal.reason) });
      if (lease.signal.aborted) onSignal();
      else lease.signal.addEventListener('abort', onSignal, { once: true });
      try {
        // Paced on the monotonic clock: a run goes on at its pace whatever the wall clock does (a test may step it).
        const startedAt = performance.now();
        for (let due = startedAt + job.effectEveryMs; due <= startedAt + job.runMs; due += job.effectEveryMs) {
          await sleep(Math.max(0, due - performance.now()));
          try {
            lease.assertValid(); // the check a job makes right before each side effect
          } catch (error) {
            record({ ...base, type: 'abort', reason: reasonOf(error) });
            record({ ...base, type: 'end', outcome: 'aborted', valid: lease.isValid() });
            return;
          }
          record({ ...base, type: 'effect', valid: true, validUntil: lease.validUntil - offsetMs });
        }
        record({ ...base, type: 'end', outcome: 'done', valid: lease.isValid() });
      } finally {
        lease.signal.removeEventListener('abort', onSignal);
      }
    }

    onApplicationBootstrap(): void {
      this.scheduleNext();
    }

    onModuleDestroy(): void {
      this.stopped = true;
    }

    // Ticks at multiples of intervalMs in real time (a @Cron with sub-second slots): every node numbers a tick
    // the same, which duplicate-tick checks need. An @Interval would drift and differ per node. The timeout is
    // registered with the SchedulerRegistry like any dynamic schedule, and cleared with it on shutdown.
    private scheduleNext(): void {
      if (this.stopped) return;
      const key = `workload:${name}`;
      const next = (Math.floor(Date.now() / job.intervalMs) + 1) * job.intervalMs;
      const timer = setTimeout(() => {
        this.schedules.deleteTimeout(key);
        const firedAt = Math.max(Date.now(), next);
        this.scheduleNext();
        // The decorated method: the runner skips the tick if the previous run of this job is still going.
        (this.run as (firedAt: number) => Promise<unknown>)(firedAt).catch((error: unknown) => {
          process.stderr.write(`${nodeName} ${name}: tick failed: ${reasonOf(error)}\n`);
        });
      }, next - Date.now() + 1); // +1: never early by the timer's rounding
      this.schedules.addTimeout(key, timer);
    }
  }

  // The decorator names the method after its class, so give each job's class a name of its own first.
  Object.defineProperty(WorkloadJobRunner, 'name', { value: `WorkloadJob${index}` });
  const options = {
    semaphore: job.semaphore, duration: job.duration, mode: job.mode, lockAtLeastFor: job.lockAtLeastFor, keepAlive: job.keepAlive,
    ...(job.maxRunTime !== undefined && { maxRunTime: job.maxRunTime }),
  } as ClusterSingletonOptions;
  const descriptor = Object.getOwnPropertyDescriptor(WorkloadJobRunner.prototype, 'run')!;
  ClusterSingleton(options)(WorkloadJobRunner.prototype, 'run', descriptor);
  Object.defineProperty(WorkloadJobRunner.prototype, 'run', descriptor);
  return WorkloadJobRunner;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

const jobs = JSON.parse(env('WORKLOAD')) as WorkloadJob[];
@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot(gatekeeperOptionsFromEnv({
      identity: process.env.GROUP ? { group: process.env.GROUP } : undefined,
      // The module's clock only when the test moves it: otherwise the system clock, as an application has.
      ...(process.env.CLOCK_OFFSET_MS !== undefined && { clock: { now: () => Date.now() + offsetMs } }),
      ...(process.env.MAX_CLOCK_SKEW && { maxClockSkew: durationFromEnv(process.env.MAX_CLOCK_SKEW) }),
      ...(process.env.DEFINITIONS && { definitions: JSON.parse(process.env.DEFINITIONS) }),
    })),
  ],
  providers: jobs.map(jobProvider),
})
class WorkloadModule {}

void bootFixture(WorkloadModule);
