/*
 * A schedules node, run as a real process by fault tests: one `@Cron` job under the real `@ClusterSingleton` (so
 * its ticks take the production path: cron fires, the runner names the instant, decides locally, records the run
 * history), with settings from env SCHEDULE. Each run appends start / effect / end events to HISTORY_FILE; a start
 * carries the run's trigger and scheduled instant (`tick`: the instant in seconds; -1 for a manual run).
 */
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { ClusterSingleton, GatekeeperModule, GatekeeperService, ScheduleHandler, ScheduleService, type ClusterSingletonOptions } from '../../lib';
import { bootFixture, env, gatekeeperOptionsFromEnv, stopWhenOrphaned } from '../fixtures/fixture-process';
import { appendEvent, type AlertEvent, type RunEvent, type Unstamped } from './history';
import type { ScheduleNodeSettings } from './schedule-node';

const nodeName = env('NODE_NAME');
const historyFile = env('HISTORY_FILE');
const settings = JSON.parse(env('SCHEDULE')) as ScheduleNodeSettings['job'];
const record = (event: Unstamped<RunEvent> & { trigger?: string; instant?: number }) => appendEvent(historyFile, event as Unstamped<RunEvent>, nodeName);

@Injectable()
class ScheduleJobs {
  constructor(private readonly gatekeeper: GatekeeperService, private readonly schedules: ScheduleService) {}

  @Cron(settings.cron, settings.timeZone ? { timeZone: settings.timeZone } : {})
  async tick(): Promise<void> {
    const lease = this.gatekeeper.currentLease()!;
    const run = this.schedules.currentRun()!;
    const base = { semaphore: settings.semaphore, job: run.trigger === 'manual' ? 'manual' : 'tick', token: lease.permit.fencingToken };
    record({ ...base, type: 'start', tick: run.instant === undefined ? -1 : Math.round(run.instant / 1000), validUntil: lease.validUntil, valid: lease.isValid(), trigger: run.trigger, instant: run.instant });
    if (settings.failWhile && existsSync(settings.failWhile)) {
      record({ ...base, type: 'end', outcome: 'failed', valid: lease.isValid() });
      throw new Error('the ledger is locked');
    }
    for (let done = 0; done < settings.runMs; done += 100) {
      await sleep(100);
      if (!lease.isValid()) {
        record({ ...base, type: 'end', outcome: 'aborted', valid: false });
        lease.assertValid();
      }
      record({ ...base, type: 'effect', valid: true });
    }
    record({ ...base, type: 'end', outcome: 'done', valid: lease.isValid() });
  }
}
const descriptor = Object.getOwnPropertyDescriptor(ScheduleJobs.prototype, 'tick')!;
ClusterSingleton({ semaphore: settings.semaphore, duration: settings.duration, ...settings.options } as ClusterSingletonOptions)(ScheduleJobs.prototype, 'tick', descriptor);
Object.defineProperty(ScheduleJobs.prototype, 'tick', descriptor);

/**
 * With env RUNTIME (`{ count, version, rounds }`): at start-up this node upserts the schedules `rt-0` .. `rt-<count-1>`
 * (every second), `rounds` times over, all at once, each carrying `version * 100 + round`, and records every
 * write's outcome and revision as an `edit` event; it runs them with its handler, recording each run's start.
 * With env RUNTIME_SCHEDULES (`[{ id, cron, timeZone }]`), it upserts those schedules at start-up, run the same way.
 */
/**
 * With `alerts`, records what this node hears of the job's health (see `ScheduleNodeSettings.job.alerts`): the
 * library's once-for-the-cluster events, or a naive per-replica monitor's, for a control.
 */
@Injectable()
class HealthAlerts implements OnApplicationBootstrap {
  constructor(private readonly gatekeeper: GatekeeperService) {}

  onApplicationBootstrap(): void {
    const alert = (kind: AlertEvent['kind'], job: string, detail: unknown) => appendEvent(historyFile, { type: 'alert', kind, job, detail }, nodeName);
    if (settings.alerts === 'library') {
      this.gatekeeper.events.subscribe((event) => {
        if (event.name === 'gatekeeper.job.failing') alert('failing', event.job, { failures: event.failures, since: event.since });
        if (event.name === 'gatekeeper.job.recovered') alert('recovered', event.job, { successes: event.successes });
        if (event.name === 'gatekeeper.job.missed') alert('missed', event.job, { instant: event.instant });
        if (event.name === 'gatekeeper.job.unrunnable') alert('unrunnable', event.job, { since: event.since });
        if (event.name === 'gatekeeper.job.overran') alert('overran', event.job, { durationMs: event.durationMs, maxRunTimeMs: event.maxRunTimeMs });
      });
    } else if (settings.alerts === 'naive') {
      let failing = false;
      this.gatekeeper.events.subscribe((event) => {
        if (event.name === 'gatekeeper.job.failed' && !failing) alert('failing', event.job, { naive: true });
        if (event.name === 'gatekeeper.job.finished' && failing) alert('recovered', event.job, { naive: true });
        if (event.name === 'gatekeeper.job.failed') failing = true;
        if (event.name === 'gatekeeper.job.finished') failing = false;
      });
    }
  }
}

@Injectable()
class RuntimeScheduleNode implements OnApplicationBootstrap {
  constructor(private readonly gatekeeper: GatekeeperService, private readonly schedules: ScheduleService) {}

  async onApplicationBootstrap(): Promise<void> {
    const listed = process.env.RUNTIME_SCHEDULES ? (JSON.parse(process.env.RUNTIME_SCHEDULES) as Array<{ id: string; cron: string; timeZone?: string }>) : [];
    for (const { id, cron, timeZone } of listed) await this.schedules.upsert({ id, cron, timeZone, handler: 'rt', duration: '3s' });
    const plan = process.env.RUNTIME ? (JSON.parse(process.env.RUNTIME) as { count: number; version: number; rounds: number }) : undefined;
    if (!plan) return;
    for (let round = 0; round < plan.rounds; round++) {
      const version = plan.version * 100 + round;
      await Promise.all(Array.from({ length: plan.count }, async (_, i) => {
        const startedAt = Date.now();
        const result = await this.schedules.upsert({ id: `rt-${i}`, cron: '* * * * * *', handler: 'rt', data: { version }, duration: '3s' });
        appendEvent(historyFile, { type: 'edit', op: 'upsert', semaphore: `rt-${i}`, args: [version], startedAt, ok: true, result: { outcome: result.outcome, revision: result.revision } }, nodeName);
      }));
    }
  }

  @ScheduleHandler('rt')
  handle(): void {
    const run = this.schedules.currentRun()!;
    const lease = this.gatekeeper.currentLease()!;
    record({ semaphore: `schedule:${run.job}`, job: run.job, token: run.token, type: 'start', tick: Math.round(run.instant! / 1000), validUntil: lease.validUntil, valid: lease.isValid(), trigger: run.trigger, instant: run.instant });
    record({ semaphore: `schedule:${run.job}`, job: run.job, token: run.token, type: 'end', outcome: 'done', valid: lease.isValid() });
  }
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot(gatekeeperOptionsFromEnv({
      ...(settings.definitions && { definitions: settings.definitions }),
      membership: { interval: '1s' },
      schedules: { history: { flushInterval: settings.flushInterval ?? '500ms', ...(settings.keep && { keep: settings.keep }) } },
    })),
  ],
  providers: [ScheduleJobs, RuntimeScheduleNode, HealthAlerts],
})
class ScheduleNodeModule {}

stopWhenOrphaned(nodeName);
void bootFixture(ScheduleNodeModule);
