import { Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClusterSingleton, GatekeeperService } from 'nestjs-gatekeeper';
import { logRun } from './job-log';

/**
 * Release mode with a run (6 s) longer than its permit (4 s): the permit is kept alive in the background while
 * the job runs, and the job checks it before each step, as a job with side effects should.
 */
@Injectable()
export class ExportJob {
  private readonly logger = new Logger(ExportJob.name);

  constructor(private readonly gatekeeper: GatekeeperService) {}

  @Cron('*/10 * * * * *')
  @ClusterSingleton({ semaphore: 'export', duration: '4s', mode: 'release', lockAtLeastFor: '8s' })
  async export(): Promise<void> {
    logRun(this.gatekeeper, 'export', ': starting a 6 s export');
    const lease = this.gatekeeper.currentLease()!;
    for (let step = 1; step <= 3; step++) {
      await sleep(2000);
      lease.assertValid();
      this.logger.log(`export step ${step}/3 done (permit valid until ${new Date(lease.permit.expiresAt).toISOString()})`);
    }
  }
}
