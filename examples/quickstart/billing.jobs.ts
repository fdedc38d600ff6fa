import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ClusterSingleton, GatekeeperService } from 'nestjs-gatekeeper';

@Injectable()
export class BillingJobs {
  private readonly logger = new Logger(BillingJobs.name);

  constructor(private readonly gatekeeper: GatekeeperService) {}

  // Every 10 seconds, on exactly one node: the one holding the 'billing' permit.
  @Cron(CronExpression.EVERY_10_SECONDS)
  @ClusterSingleton('billing', '1m')
  async chargeCustomers(): Promise<void> {
    const permit = this.gatekeeper.currentPermit()!;
    this.logger.log(`charging as ${permit.acquirer}, fencing token ${permit.fencingToken}`);
  }

  // ShedLock-style: release after each run, but hold at least 50 s so late ticks elsewhere skip.
  @Cron(CronExpression.EVERY_MINUTE)
  @ClusterSingleton({ semaphore: 'export', duration: '10m', mode: 'release', lockAtLeastFor: '50s' })
  async exportLedger(): Promise<void> {
    this.logger.log('exporting');
  }
}
