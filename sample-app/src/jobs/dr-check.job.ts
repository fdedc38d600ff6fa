import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton, GatekeeperService } from 'nestjs-gatekeeper';
import { logRun } from './job-log';

/** Restricted by its definition's groupPattern to the dr-site instance. */
@Injectable()
export class DrCheckJob {
  constructor(private readonly gatekeeper: GatekeeperService) {}

  @Cron('*/5 * * * * *')
  @ClusterSingleton('dr-check', '15s')
  verifyReplica(): void {
    logRun(this.gatekeeper, 'dr-check');
  }
}
