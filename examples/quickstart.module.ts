import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { BillingJobs } from './billing.jobs';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot({
      identity: { group: 'production', acquirer: process.env.HOSTNAME ?? 'app-1' },
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
