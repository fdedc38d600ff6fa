import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton } from 'nestjs-gatekeeper';

/** Jobs that check in with the monitors a team already uses: each scheduled run's start and end, once, from the node that ran it. */
@Injectable()
export class MonitoredJobs {
  /** Healthchecks.io: the check's ping URL; the library adds `/start`, `/fail` and the run's id. */
  @Cron('0 0 2 * * *')
  @ClusterSingleton({ semaphore: 'nightly-invoices', duration: '10m', checkIn: { healthchecks: 'https://hc-ping.com/5f0bd2a4-2cbb-4a59-9f54-a0e6e0e31a3c' } })
  async invoices(): Promise<void> {}

  /** Cronitor: the monitor's telemetry URL; the library adds `state` and the run's id as `series`. */
  @Cron('0 */15 * * * *')
  @ClusterSingleton({ semaphore: 'price-sync', duration: '5m', checkIn: { cronitor: 'https://cronitor.link/p/your-api-key/price-sync', timeout: '3s' } })
  async prices(): Promise<void> {}

  /** Any other monitor: URLs of your own, `{run}` being the run's id (only `success` is required). */
  @Cron('0 0 * * * *')
  @ClusterSingleton({
    semaphore: 'hourly-export',
    duration: '10m',
    checkIn: {
      start: 'https://monitor.example.com/hourly-export/start?run={run}',
      success: 'https://monitor.example.com/hourly-export/ok?run={run}',
      failure: 'https://monitor.example.com/hourly-export/fail?run={run}',
    },
  })
  async export(): Promise<void> {}
}
