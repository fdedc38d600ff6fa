import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton, GatekeeperService, ScheduleService } from 'nestjs-gatekeeper';

/** Jobs that use the schedule features: the instant a run is for, missed runs caught up, and a run that is replaced. */
@Injectable()
export class ReportJobs {
  constructor(
    private readonly gatekeeper: GatekeeperService,
    private readonly schedules: ScheduleService,
  ) {}

  /**
   * Every night at 02:30 Berlin time. If every node was down at 02:30 (a deploy, an outage), the newest missed
   * night runs once as soon as a node is back, if that is within 6 hours.
   */
  @Cron('0 30 2 * * *', { timeZone: 'Europe/Berlin' })
  @ClusterSingleton({ semaphore: 'nightly-report', duration: '10m', missedRuns: 'runOnce', catchUpWindow: '6h' })
  async nightly(): Promise<void> {
    // The scheduled instant is the same on every node for one night: a good idempotency key.
    const run = this.schedules.currentRun();
    await this.publish(`report-${new Date(run?.instant ?? Date.now()).toISOString().slice(0, 10)}`);
  }

  /** Every minute; a run still going when the next minute comes is told to stop and the new one starts after it. */
  @Cron('0 * * * * *')
  @ClusterSingleton({ semaphore: 'price-refresh', duration: '2m', overlap: 'replace', replaceWait: '10s' })
  async refreshPrices(): Promise<void> {
    const signal = this.gatekeeper.currentLease()?.signal;
    for (const page of [1, 2, 3, 4, 5]) {
      signal?.throwIfAborted(); // replaced by the next tick, or the permit lost: stop before the next page
      await this.fetchPage(page);
    }
  }

  private async publish(key: string): Promise<void> {
    void key;
  }

  private async fetchPage(page: number): Promise<void> {
    void page;
  }
}
