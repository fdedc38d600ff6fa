import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { BillingJobs } from './billing.jobs';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot({
      // acquirer defaults to <hostname>-<pid>; set it to a name of this replica (a pod name), never a shared fallback
      identity: { group: 'production' },
      hazelcast: {
        clientConfig: { clusterName: 'dev', network: { clusterMembers: ['127.0.0.1:5701'] } },
      },
      definitions: [
        { name: 'billing', permits: 1, duration: '2m', groupPattern: 'production' },
        { name: 'reports', permits: 2, duration: '10m' },
      ],
    }),
  ],
  providers: [BillingJobs],
})
export class AppModule {}
