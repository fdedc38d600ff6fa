import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { BillingJobs } from './billing.jobs';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot({
      // This replica's site. Its acquirer (its name) defaults to <hostname>-<pid>; set it to something unique per
      // replica, such as the pod name, never to a value two replicas could share.
      identity: { group: 'production' },
      // The state in PostgreSQL (npm install pg), on the database GATEKEEPER_PG_URL names (or give postgres:
      // { connectionString }, { poolConfig } or { pool }, your app's own pg.Pool). The library creates its tables, in
      // the schema `gatekeeper`, at the first start. The other stores: 'redis' (npm install ioredis, with
      // GATEKEEPER_REDIS_URL), or 'hazelcast', the default when `backend` is left out.
      backend: 'postgres',
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
