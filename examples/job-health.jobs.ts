import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton } from 'nestjs-gatekeeper';

/** A nightly job with a cron monitor's knobs: late after 5 minutes, failing after 3 failed runs in a row, recovered after 2 good ones. */
@Injectable()
export class LedgerJobs {
  @Cron('0 0 2 * * *')
  @ClusterSingleton({ semaphore: 'ledger-close', duration: '10m', maxRunTime: '1h', health: { grace: '5m', failureThreshold: 3, recoveryThreshold: 2 } })
  async closeLedger(): Promise<void> {}
}
