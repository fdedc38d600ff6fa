import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { ClusterStatusController } from './cluster-status.controller';
import { LeaderJobs } from './leader-jobs.service';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot({
      identity: { group: process.env.SITE!, acquirer: process.env.POD_NAME! },
      // Only production nodes stand; a crashed leader is replaced within 10 s + 2 × maxClockSkew + one retry.
      elections: [{ name: 'leader', lease: '10s', groupPattern: 'production' }],
    }),
  ],
  controllers: [ClusterStatusController],
  providers: [LeaderJobs],
})
export class LeaderElectionModule {}
