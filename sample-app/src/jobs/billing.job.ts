import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton, GatekeeperService } from 'nestjs-gatekeeper';
import { logRun } from './job-log';

/** A singleton every 2 seconds: exactly one instance runs each tick, and the holder keeps the job. */
@Injectable()
export class BillingJob {
  constructor(private readonly gatekeeper: GatekeeperService) {}

  @Cron('*/2 * * * * *')
  @ClusterSingleton('billing', '6s')
  charge(): void {
    logRun(this.gatekeeper, 'billing');
  }
}
