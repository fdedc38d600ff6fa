import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { ClusterService, GatekeeperService, LeaderOnly } from 'nestjs-gatekeeper';
import { logRun } from './job-log';

/** Leader-only: runs on the elected leader of the 'leader' election, whichever instance that is. */
@Injectable()
export class DigestJob {
  constructor(
    private readonly cluster: ClusterService,
    private readonly gatekeeper: GatekeeperService,
  ) {}

  @Cron('*/2 * * * * *')
  @LeaderOnly()
  async send(): Promise<void> {
    const lease = this.cluster.currentLeadership()!;
    lease.assertValid(); // right before the side effect
    const { participants } = this.cluster.status();
    logRun(this.gatekeeper, 'digest', ` as leader (epoch ${lease.epoch}) of ${participants.length} participant(s)`, lease.epoch);
  }
}
