import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ClusterSingleton, GatekeeperService } from 'nestjs-gatekeeper';
import { logRun } from './job-log';

/** Two permits: two of the three instances run it each tick. */
@Injectable()
export class ReportsJob {
  constructor(private readonly gatekeeper: GatekeeperService) {}

  @Cron('*/3 * * * * *')
  @ClusterSingleton('reports', '9s')
  build(): void {
    logRun(this.gatekeeper, 'reports');
  }
}
