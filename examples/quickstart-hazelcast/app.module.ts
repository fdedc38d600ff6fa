import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { BillingJobs } from './billing.jobs';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot({
      identity: { group: 'production' },
      // No `backend`: the state in Hazelcast, the default (npm install hazelcast-client@~5.6.0). No `hazelcast`
      // options: the cluster is GATEKEEPER_HZ_MEMBERS / GATEKEEPER_HZ_CLUSTER_NAME, else Hazelcast's defaults,
      // 127.0.0.1:5701 and cluster "dev" (what a member started with no configuration uses).
      definitions: [
        { name: 'billing', permits: 1, duration: '1m', groupPattern: 'production' },
        { name: 'export', permits: 1, duration: '10m' },
      ],
      // The admin API under /gatekeeper, behind the token in GATEKEEPER_ADMIN_TOKEN (the app refuses to start
      // without one); the CLI sends the same variable, so `npx nestjs-gatekeeper jobs describe|run` finds this node.
      admin: {},
    }),
  ],
  providers: [BillingJobs],
})
export class AppModule {}
